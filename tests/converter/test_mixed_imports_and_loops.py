"""Real scripts put torch beside other modules in one import line, and build batches with torch.from_numpy inside
the training loop: the conversion keeps the other modules and runs."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from mindport import convert_source


def test_an_import_line_with_torch_and_other_modules_keeps_the_others():
    code = convert_source("import torch, numpy as np\nimport os, torch.nn as nn\n\nx = torch.ones(2)\n"
                          "y = np.zeros(2) + len(os.sep)\n").code
    assert "import numpy as np" in code and "import os" in code and "torch" not in code
    namespace: dict = {}
    exec(compile(code, "converted", "exec"), namespace)
    assert namespace["y"].shape == (2,)


def test_a_loop_that_builds_its_batch_with_from_numpy_converts_and_trains(tmp_path):
    source = textwrap.dedent("""\
        import torch, numpy as np
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        inputs = np.random.default_rng(0).standard_normal((20, 4, 3)).astype(np.float32)
        losses = []
        for step in range(20):
            x = torch.from_numpy(inputs[step])
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(float(loss))
        print(losses[0], losses[-1])
    """)
    result = convert_source(source)
    assert "from_numpy.set_train" not in result.code and "value_and_grad" in result.code, result.code
    script = tmp_path / "train.py"
    script.write_text(result.code)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    first, last = map(float, run.stdout.split()[-2:])
    assert last < first  # it trains


def test_imports_on_semicolon_lines_are_converted_and_the_layer_matches_torch():
    # an import among other statements on one `;` line stayed as written: `import torch` remained, the file's
    # MindSpore imports were never placed, and `nn.Module` below read torch's
    import numpy as np
    import torch

    source = textwrap.dedent("""\
        import torch; import math  # first line
        import torch.nn as nn; import torch.nn.functional as F

        class M(nn.Module):
            def __init__(self):
                super().__init__(); self.l = nn.Linear(4, 3)
            def forward(self, x):
                return F.relu(self.l(x)) * math.pi
    """)
    code = convert_source(source).code
    assert "torch" not in code.replace("# first line", ""), code
    assert "import math  # first line" in code and "super().__init__(); self.l" in code, code
    torch_ns: dict = {}
    exec(compile(source, "original", "exec"), torch_ns)
    ms_ns: dict = {}
    exec(compile(code, "converted", "exec"), ms_ns)
    import mindspore as ms

    ref = torch_ns["M"]().eval()
    port = ms_ns["M"]()
    assert isinstance(port, ms.nn.Cell)
    port.l.weight.set_data(ms.Tensor(ref.l.weight.detach().numpy()))
    port.l.bias.set_data(ms.Tensor(ref.l.bias.detach().numpy()))
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(port(ms.Tensor(x)).asnumpy(), ref(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-6, atol=1e-6)
