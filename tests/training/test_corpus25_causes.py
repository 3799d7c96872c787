"""Session corpus25 (issue 27): causes found by the whole training corpus's run on main (/work/notes/corpus25.md).
One test each, on real torch and real MindSpore, each failing without its fix; the expected values are torch's,
run here."""
from __future__ import annotations

import numpy as np

from _harness import load_module
from test_fresh_causes import _convert

# Layer sizes that are numpy integers where no reading of the source can tell: a gym-like space keeps its size as
# ``np.int64`` (gym's ``Discrete(n).n``) and the model is built from it in another function (OhGreat/PolicyBased_DeepRL
# x2: "For 'Dense', the 'in_channels' must be int, but got 'int64'"). torch takes any ``__index__`` integer. The slice
# kept here is one layer of each argument check MindSpore refuses numpy integers in (``_check_number``: Dense, Conv,
# GroupNorm, PReLU; ``check_value_type``: Embedding, BatchNorm; torch's own LSTM refuses a numpy size); the measurement
# built 41 layer constructors given numpy sizes, converted (22 refused on main, 0 after).
SPACE_SIZES = '''
import numpy as np
import torch
import torch.nn as nn


class Discrete:
    def __init__(self, n):
        self.n = np.int64(n)


class Net(nn.Module):
    def __init__(self, inputs, hidden, classes, vocab):
        super().__init__()
        self.embed = nn.Embedding(vocab.n, inputs.n)
        self.conv = nn.Conv1d(inputs.n, hidden.n, kernel_size=3, padding=1)
        self.norm = nn.GroupNorm(2, hidden.n)
        self.bn = nn.BatchNorm1d(hidden.n)
        self.act = nn.PReLU(hidden.n)
        self.head = nn.Linear(hidden.n, classes.n)

    def forward(self, tokens):
        x = self.embed(tokens)
        x = self.act(self.bn(self.norm(self.conv(x.transpose(1, 2)))))
        return self.head(x.mean(dim=2))


def build():
    return Net(Discrete(6), Discrete(8), Discrete(3), Discrete(11))
'''


def test_numpy_integer_layer_sizes_build_and_compute_like_torch():
    import mindspore as ms
    import torch

    from mindport.migrator.weights import transfer_weights

    code = _convert(SPACE_SIZES)
    assert "mindport: MP" not in code, code
    assert "int(inputs.n)" not in code  # the converter cannot see these: the run time takes them
    t_mod = load_module(SPACE_SIZES, "torch_space_sizes")
    m_mod = load_module(code, "ms_space_sizes")
    torch.manual_seed(0)
    t_net, m_net = t_mod.build(), m_mod.build()
    transfer_weights({k: v.detach().clone() for k, v in t_net.state_dict().items()}, m_net)
    assert m_net.head.in_channels == 8 and type(m_net.head.in_channels) is int
    tokens = np.random.default_rng(0).integers(0, 11, (4, 5))
    t_net.train()
    m_net.set_train(True)
    expected = t_net(torch.tensor(tokens)).detach().numpy()
    got = m_net(ms.Tensor(tokens.astype(np.int32))).asnumpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_a_timed_out_side_reports_how_far_it_got(tmp_path):
    """run.py: a side stopped at --timeout kept nothing it had printed ("timeout"), so a slow PyNative loop (losses
    still coming: cs598/seq2seq_sql, devskill/seq2seq_reverse, whose port logs its losses on stderr) could not be told
    from a stuck one. The time-out now keeps what both streams held and says how many losses were printed by then."""
    import sys

    from test_corpus_causes import _boot

    _, run = _boot()
    script = tmp_path / "slow.py"
    script.write_text("import sys, time\nfor i in range(3):\n    print(f'loss: {1.0 / (i + 1)}', file=sys.stderr, "
                      "flush=True)\ntime.sleep(60)\n")
    entry = {"id": "x/slow", "script": "slow.py", "loss": r"loss: (\d+\.\d+)", "loss_stream": "stderr"}
    import subprocess
    try:
        subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=3)
    except subprocess.TimeoutExpired as e:
        side = {"rc": -9, "stdout": run._text(e.stdout), "stderr": run._text(e.stderr) + "\ntimeout", "seconds": 3}
    torch_side = {"rc": 0, "stdout": "", "stderr": "loss: 1.0\nloss: 0.5\nloss: 0.3\nloss: 0.2\n", "seconds": 1}
    assert run.side_error(entry, side, torch_side) == "timeout after 3 s: 3 of 4 losses printed"
    assert run.side_error(entry, {"rc": 1, "stderr": "Traceback\nValueError: bad\n"}) == "ValueError: bad"
    assert run.side_error(entry, torch_side) == ""
