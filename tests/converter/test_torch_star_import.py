"""``from torch.nn.init import *`` then ``xavier_uniform_(self.w)`` (gwinndr/MusicTransformer-Pytorch's rpr.py, batch
26): a star import of a torch module bound nothing, so the names it brings stayed torch's functions called on
MindSpore Parameters (``TypeError: 'int' object is not callable`` inside torch's fan computation while the Cell was
built). Class: a star import of a torch module binds the module's public names the mapping tables know
(``names.bind_star``), in the converter, in lint, and through a project module that star-imports torch itself."""
from __future__ import annotations

import math
import textwrap

import numpy as np
import torch

from mindport import convert_source
from tests.converter.port_check import load_module

SOURCE = textwrap.dedent("""\
    import torch
    from torch.nn import Module, Parameter
    from torch.nn.init import *
    from torch.nn.functional import *


    class Mixer(Module):
        def __init__(self):
            super().__init__()
            self.w = Parameter(torch.empty(6, 4))
            self.e = Parameter(torch.empty(4, 4))
            self.b = Parameter(torch.empty(6))
            xavier_uniform_(self.w)
            eye_(self.e)
            constant_(self.b, 0.25)

        def forward(self, x):
            return softmax(linear(relu(x) @ self.e, self.w, self.b), dim=-1)
""")


def test_star_import_names_are_converted(tmp_path):
    result = convert_source(SOURCE)
    port = load_module(result.code, tmp_path / "mixer_ms.py", "mixer_ms").Mixer()
    torch.manual_seed(0)
    reference = load_module(SOURCE, tmp_path / "mixer_torch.py", "mixer_torch").Mixer()
    np.testing.assert_array_equal(port.e.asnumpy(), np.eye(4, dtype=np.float32))
    np.testing.assert_array_equal(port.b.asnumpy(), np.full(6, 0.25, np.float32))
    w = port.w.asnumpy()  # xavier's bound for fan_in 4, fan_out 6, and not a constant
    assert np.abs(w).max() <= math.sqrt(6 / 10) + 1e-6 and w.std() > 0.05, w
    with torch.no_grad():  # the forward, on torch's weights: F's names from the star too
        import mindspore as ms
        for name in ("w", "e", "b"):
            getattr(port, name).set_data(ms.Tensor(getattr(reference, name).detach().numpy()))
        x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
        want = reference(torch.from_numpy(x)).numpy()
    got = port(ms.Tensor(x)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_star_names_are_public_names_of_the_torch_module():
    from mindport.mappings import star_names
    names = star_names("torch.nn.init")
    assert "xavier_uniform_" in names and "constant_" in names
    assert not any(n.startswith("_") for n in names)
    exported = set(torch.nn.init.__all__)
    assert set(names) <= exported, set(names) - exported
    assert star_names("torch.nn.not_a_module") == ()


def test_project_module_that_star_imports_torch(tmp_path):
    from mindport.migrator.project import star_bindings
    (tmp_path / "layers.py").write_text("from torch.nn.init import *\n")
    (tmp_path / "model.py").write_text("from layers import *\n")
    bound = dict(star_bindings(tmp_path, ["layers.py", "model.py"])["model.py"])
    assert bound["kaiming_normal_"] == "torch.nn.init.kaiming_normal_"


def test_complete_stars_are_torch_modules_all():
    from mindport.mappings import COMPLETE_STARS, star_names
    import importlib
    for module in COMPLETE_STARS:
        assert set(star_names(module)) == set(importlib.import_module(module).__all__), module


GRAPH_SOURCE = textwrap.dedent("""\
    import torch
    from torch.nn import Module, Linear
    from torch.nn.init import *


    class Legacy(Module):
        def __init__(self):
            super().__init__()
            self.fc = Linear(4, 3)
            constant_(self.fc.bias, 0.5)

        def forward(self, x):
            if not hasattr(self, "fc"):
                warnings.warn("old checkpoint")
            return self.fc(x)
""")


def test_unbound_name_in_a_file_with_a_complete_torch_star_compiles(tmp_path):
    """``warnings`` is bound by no statement and not by torch.nn.init's star: a branch torch never takes reads it,
    and GRAPH_MODE refused the method ("The name 'warnings' is not defined")."""
    import mindspore as ms
    code = convert_source(GRAPH_SOURCE).code
    assert "raise NameError" in code, code
    torch.manual_seed(0)
    reference = load_module(GRAPH_SOURCE, tmp_path / "legacy_torch.py", "legacy_torch").Legacy()
    port = load_module(code, tmp_path / "legacy_ms.py", "legacy_ms").Legacy()
    for name in ("weight", "bias"):
        getattr(port.fc, name).set_data(ms.Tensor(getattr(reference.fc, name).detach().numpy()))
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        want = reference(torch.from_numpy(x)).numpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        got = port(ms.Tensor(x)).asnumpy()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_star_line_goes_when_no_name_of_it_is_left(tmp_path):
    """Every name the stars brought was converted: the port imports no torch (the line stayed and needed torch)."""
    code = convert_source(SOURCE).code
    assert "torch" not in code, code
    load_module(code, tmp_path / "no_torch_ms.py", "no_torch_ms").Mixer()


def test_star_line_stays_while_a_name_may_come_from_it():
    """A name read and bound nowhere (here torch.nn.functional's has_torch_function, which no table maps) may come
    from either star: both stay, as written."""
    code = convert_source(SOURCE.replace("eye_(self.e)", "eye_(self.e)\n        has_torch_function((self.e,))")).code
    assert "from torch.nn.init import *" in code and "from torch.nn.functional import *" in code, code


def test_free_globals_is_python_scope_analysis():
    from mindport.migrator.imports import _free_globals
    code = textwrap.dedent("""\
        import numpy as np
        class A:
            x = relu
            def f(self, y):
                global G
                G = 1
                return softmax([q for q in y]) + np.abs(y) + G + len(y)
        def g():
            return A, __name__
    """)
    assert _free_globals(code) == {"relu", "softmax"}
