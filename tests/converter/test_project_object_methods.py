"""Objects of the project's own plain classes (batch24's first contact: NCRF++'s ``Alphabet.size()`` read as
``torch.Tensor.size`` and written ``.shape``). A method call on one whose name torch.Tensor also has is the class's
own: left as written wherever the object is held (an attribute, a local, an annotated parameter, a module global, a
list item) and in a file that imports it from the project. A receiver nothing says anything of (a parameter without
annotation) keeps the converter's former reading.

Real runs: each program converted by the real converter, run on MindSpore and compared with torch on the same
weights and input (port_check)."""
from __future__ import annotations

import re
import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches, load_module, transfer_weights

_CLASS = """\
class Alphabet:
    \"\"\"A vocabulary: every method named as a torch.Tensor method, each giving a Python value.\"\"\"

    def __init__(self, n=5):
        self.names = ["w%d" % i for i in range(n)]

    def size(self):
        return len(self.names)

    def view(self, i):
        return self.names[i]

    def type(self):
        return "alphabet"

    def item(self):
        return self.names[0]

    def to(self, n):
        return Alphabet(n)

    def copy(self):
        return Alphabet(len(self.names))

    def sort(self):
        self.names.sort()
        return self

    def float(self):
        return float(len(self.names))

    def numpy(self):
        return list(self.names)

    def detach(self):
        return self

    def sum(self):
        return 2 * len(self.names)
"""

_MODEL = """\
GLOBAL_ALPHABET = Alphabet(3)


def table_size(alphabet: Alphabet):
    return alphabet.size() + alphabet.to(2).size() + len(alphabet.numpy())


def quoted_size(alphabet: "Alphabet"):
    return alphabet.copy().size() + int(alphabet.float())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.alphabet = Alphabet(7)
        local = Alphabet(4)
        local.sort()
        items = [Alphabet(2), Alphabet(6)]
        self.alphabets = [Alphabet(k) for k in (3, 4)]
        for each in items:
            assert each.type() == "alphabet"
        assert self.alphabet.type() == "alphabet" and self.alphabet.view(1) == "w1"
        assert local.item() == "w0" and local.detach() is local
        n = self.alphabet.size() + local.size() + GLOBAL_ALPHABET.size() + items[1].size() + local.sum()
        n += self.alphabets[1].size() + sum(a.size() for a in self.alphabets) + int(each.float())
        n += table_size(local) + quoted_size(self.alphabet)
        self.embedding = nn.Embedding(n, 4)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        h = self.embedding(x).sum(1)
        return self.fc(h) * x.size(1)
"""


def _convert(source: str, name: str = "model.py") -> str:
    result = convert_source(source, name)
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    return result.code


def _with_ids(source: str) -> str:
    """assert_port_matches draws floats: the embedding takes token ids, so the model makes them itself."""
    return source.replace("h = self.embedding(x).sum(1)", "h = self.embedding((x.abs() * 3).long()).sum(1)")


@pytest.mark.parametrize("method", ["size", "view", "type", "item", "to", "copy", "sort", "float", "numpy", "detach",
                                    "sum"])
def test_own_methods_stay_as_written(method):
    source = "import torch\nimport torch.nn as nn\n\n\n" + _CLASS + "\n\n" + _MODEL
    code = _convert(source)
    before = re.findall(rf"\.{method}\(", _MODEL.split("def forward")[0])
    after = re.findall(rf"\.{method}\(", code.split("def construct")[0].split("GLOBAL_ALPHABET = Alphabet(3)")[1])
    assert len(after) == len(before), code


def test_objects_of_the_projects_class_run_as_in_torch(tmp_path):
    source = _with_ids("import torch\nimport torch.nn as nn\n\n\n" + _CLASS + "\n\n" + _MODEL)
    code = _convert(source)
    assert "x.shape[1]" in code  # the tensor's size() still converted
    assert_port_matches(source, code, "Net", (2, 5), tmp_path, "own_alphabet", 1e-5)


def test_class_imported_from_the_project(tmp_path):
    """``from vocab import Alphabet`` in another file of the project: the converted tree runs as torch does."""
    from mindport.migrator.repo import convert_path

    src = tmp_path / "src"
    src.mkdir()
    (src / "vocab.py").write_text(_CLASS)
    model = _with_ids("import torch\nimport torch.nn as nn\nfrom vocab import Alphabet\n\n\n" + _MODEL)
    (src / "model.py").write_text(model)
    convert_path(src, tmp_path / "conv")
    code = (tmp_path / "conv" / "model.py").read_text()
    assert ".shape" not in code.split("def construct")[0], code
    import sys
    sys.path.insert(0, str(src))
    try:
        assert_port_matches(model, code, "Net", (2, 5), tmp_path, "imported_alphabet", 1e-5)
    finally:
        sys.path.remove(str(src))


def test_unknown_receiver_keeps_the_tensor_reading():
    """A parameter nothing annotates (``def f(t): t.size(0)``): as before, a tensor's size."""
    code = _convert(textwrap.dedent("""\
        import torch


        def rows(t, cache):
            return t.size(0) + t.size()[1] + cache.k.size(1)
        """))
    # a member of a parameter outside __init__ (a helper forward may call, compiled by GRAPH_MODE): x.shape too
    assert "t.shape[0]" in code and "t.shape[1]" in code and "cache.k.shape[1]" in code, code


_CONFIG_MODEL = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, data):
        super().__init__()
        self.embedding = nn.Embedding(data.word_alphabet.size(), data.vectors.size(1))
        self.extra = nn.Embedding(data.alphabets[1].size(), data.vectors.size()[1])
        self.fc = nn.Linear(data.vectors.size(1), 3)

    def forward(self, x):
        ids = (x.abs() * 3).long()
        return self.fc(self.embedding(ids).sum(1) + self.extra(ids).sum(1)) * x.size(1)
"""


def test_a_parameters_members_size_is_decided_on_the_value(tmp_path):
    """NCRF++'s ``nn.Embedding(data.word_alphabet.size(), d)``: ``data`` is a parameter of ``__init__`` nothing
    annotates, and its class lives in a file the conversion does not see. In ``__init__``, a member's ``size()`` is
    ``mp_tensor.size_of``: a tensor's shape, any other object's own method (the torch run gives both)."""
    import types

    import torch

    code = _convert(_CONFIG_MODEL)
    assert "size_of(data.word_alphabet)" in code and "x.shape[1]" in code, code

    class Alphabet:
        def __init__(self, n):
            self.n = n

        def size(self):
            return self.n

    def config(tensor):
        return types.SimpleNamespace(word_alphabet=Alphabet(7), alphabets=[Alphabet(2), Alphabet(5)],
                                     vectors=tensor(np.zeros((7, 4), np.float32)))

    import mindspore as ms

    t_net = load_module(_CONFIG_MODEL, tmp_path / "t_cfg.py", "t_cfg").Net(config(torch.from_numpy)).eval()
    m_net = load_module(code, tmp_path / "m_cfg.py", "m_cfg").Net(config(ms.Tensor))
    m_net.set_train(False)
    transfer_weights(t_net.state_dict(), m_net)
    x = np.random.default_rng(0).standard_normal((2, 5)).astype(np.float32)
    with torch.no_grad():
        want = t_net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(m_net(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)
