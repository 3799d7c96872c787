"""Name resolution (mindport/names.py, shared with lint; mindport/migrator/scopes.py walks scopes): every import form
resolves to the torch name; nothing that is not torch's is ever touched."""
from __future__ import annotations

import re
import textwrap

import libcst as cst
import pytest

from mindport import convert_source
from mindport.migrator.scopes import build_scopes


def _resolve(code: str, expr: str, function: str | None = None) -> str | None:
    module = cst.parse_module(textwrap.dedent(code))
    builder = build_scopes(module)
    scope = builder.module_scope
    if function is not None:
        fn = next(n for n in module.body if isinstance(n, cst.FunctionDef) and n.name.value == function)
        scope = builder.scopes[id(fn)]
    return scope.resolve_torch(cst.parse_expression(expr))


@pytest.mark.parametrize("code, expr, qual", [
    ("import torch", "torch.nn.Conv2d", "torch.nn.Conv2d"),
    ("import torch.nn as nn", "nn.Conv2d", "torch.nn.Conv2d"),
    ("from torch import nn", "nn.Linear", "torch.nn.Linear"),
    ("import torch.nn.functional as F", "F.relu", "torch.nn.functional.relu"),
    ("from torch.nn import functional as F", "F.relu", "torch.nn.functional.relu"),
    ("from torch.nn import Conv2d as C", "C", "torch.nn.Conv2d"),
    ("from torch.nn import Conv2d, BatchNorm2d", "BatchNorm2d", "torch.nn.BatchNorm2d"),
    ("import torch.nn", "torch.nn.ReLU", "torch.nn.ReLU"),
    ("import torch as T", "T.cat", "torch.cat"),
    ("from torch.nn import init", "init.zeros_", "torch.nn.init.zeros_"),
    ("import torch.nn.functional as F\nact = F.relu", "act", "torch.nn.functional.relu"),
    ("from torch import nn\nLayer = nn.Linear", "Layer", "torch.nn.Linear"),
])
def test_import_forms_resolve(code, expr, qual):
    assert _resolve(code, expr) == qual


def test_import_inside_a_function_resolves_there_only():
    code = """
    def head():
        from torch import nn as tnn
        return tnn.Linear(2, 3)
    """
    assert _resolve(code, "tnn.Linear", function="head") == "torch.nn.Linear"
    assert _resolve(code, "tnn.Linear") is None


def test_local_alias_inside_a_function():
    code = """
    import torch.nn.functional as F
    def f(x):
        pool = F.adaptive_avg_pool2d
        return pool(x, 1)
    """
    assert _resolve(code, "pool", function="f") == "torch.nn.functional.adaptive_avg_pool2d"
    assert _resolve(code, "pool") is None


@pytest.mark.parametrize("code, expr", [
    ("import torch.nn as nn\nnn = make_layers()", "nn.Linear"),               # rebinding shadows the import
    ("from flax import linen as nn", "nn.Dense"),                            # another library's nn
    ("import numpy as torch", "torch.sum"),                                   # a non-torch module named torch
    ("from . import nn", "nn.Conv2d"),                                        # a project-local module
])
def test_shadowed_or_foreign_names_are_not_torch(code, expr):
    assert _resolve(code, expr) is None


def test_parameter_shadows_import_in_function():
    code = "import torch.nn as nn\ndef f(nn):\n    return nn.Linear\n"
    assert _resolve(code, "nn.Linear", function="f") is None
    assert _resolve(code, "nn.Linear") == "torch.nn.Linear"


def test_every_import_form_converts_end_to_end():
    src = textwrap.dedent("""
        import torch
        import torch.nn as nn
        from torch import nn as tnn
        from torch.nn import functional as F
        from torch.nn import Conv2d as C

        act = F.relu


        def build():
            from torch.nn import Linear
            return Linear(4, 2)


        a = nn.Linear(4, 2)
        b = tnn.Linear(4, 2)
        c = C(3, 4, 3)
        d = act(torch.flatten(a.weight))
    """)
    result = convert_source(src)
    assert result.diagnostics == []
    out = result.code
    assert "torch" not in re.sub(r'mp_adapt\.api\("torch[\w.]*"\)', "", out)  # no torch name but an adapter's
    assert out.count("nn.Dense(in_channels=4, out_channels=2)") == 3
    assert "nn.Conv2d(in_channels=3, out_channels=4, kernel_size=3" in out
    assert 'act = ops.relu' in out and "d = act(" in out  # an alias only ever called: the MindSpore name


def test_non_torch_code_is_never_touched():
    src = textwrap.dedent('''\
        import numpy as np
        from flax import linen as nn
        import torch

        arr = np.ones((3, 4))
        total = arr.sum(axis=0)
        m = arr.mean(axis=1)
        layer = nn.Dense(features=3)
        items = {"a": 1}.items()
        names = ["x"]
        names.append("y")
        text = "torch.nn.Conv2d(3, 4, 3) and x.size(0) and F.relu"
        doc = 'import torch.nn as nn'
        y = torch.zeros(1) if False else None
    ''')
    result = convert_source(src)
    out = result.code
    for line in src.splitlines()[:13]:
        if line.strip() and "import torch" not in line:
            assert line in out, line
    assert "np.ones((3, 4))" in out


def test_a_local_nn_from_another_library_with_torch_also_imported():
    src = textwrap.dedent("""\
        import torch.nn as tnn
        import haiku as nn

        def f():
            return nn.Linear(3), tnn.Linear(3, 4)
    """)
    out = convert_source(src).code
    assert "nn.Linear(3)" in out  # haiku's, unchanged
    assert "Dense(in_channels=3, out_channels=4)" in out
    assert "import haiku as nn" in out
    assert "from mindspore import nn as ms_nn" in out or "ms_nn" in out


def test_attribute_named_like_torch_is_not_torch():
    src = "import torch\nclass A:\n    torch = 1\n\nx = A().torch\ny = self_obj.nn.Conv2d\n"
    result = convert_source(src)
    assert "x = A().torch" in result.code
    assert "y = self_obj.nn.Conv2d" in result.code


def test_self_is_not_a_tensor_receiver():
    # `self.norm(x)` is a layer call; torch.Tensor.norm's mapping must not touch it (x.norm() on a parameter would)
    src = textwrap.dedent("""\
        import torch.nn as nn
        class Block(nn.Module):
            def forward(self, x):
                return self.norm(x) + self.sum(x)
    """)
    result = convert_source(src)
    assert "return self.norm(x) + self.sum(x)" in result.code
    assert result.diagnostics == []


IMPORT_FORMS = [
    ("import torch", "torch.nn.Conv2d"),
    ("import torch.nn as nn", "nn.Conv2d"),
    ("from torch import nn", "nn.Linear"),
    ("from torch.nn import functional as F", "F.relu"),
    ("from torch.nn import Conv2d as C", "C"),
    ("import torch.nn", "torch.nn.ReLU"),
    ("import mindspore as ms", "ms.nn.Cell"),
    ("from mindspore import nn", "nn.Dense"),
    ("from .layers import nn", "nn.Conv2d"),
    ("from . import torch", "torch.cat"),
    ("import numpy as np", "np.mean"),
    ("x = 1", "x.real"),
]


@pytest.mark.parametrize("code, expr", IMPORT_FORMS)
def test_converter_and_lint_resolve_alike(code, expr):
    """Both walk their own tree (LibCST, ast) but bind imports with mindport.names: the same name means the same."""
    import ast

    from mindport.validators.lint.context import FileContext

    module = cst.parse_module(code + "\n")
    converter = build_scopes(module).module_scope.resolve(cst.parse_expression(expr))
    lint = FileContext("<t>", code + "\n", ast.parse(code + "\n")).resolve(ast.parse(expr, mode="eval").body)
    assert converter == lint


def test_mindspore_aliases_never_shadow_a_name_of_the_users_in_any_scope():
    # `import mindspore.dataset as ds` would be shadowed by the function's own `ds` (and `ops` by a loop variable)
    src = textwrap.dedent("""\
        import torch
        from torch.utils.data import DataLoader, TensorDataset


        def batches(x, y):
            ds = TensorDataset(x, y)
            loader = DataLoader(ds, batch_size=2)
            sizes = [len(b[0]) for b in loader]
            for ops in sizes:
                sizes.append(int(torch.relu(torch.tensor(float(ops)))))
                break
            return sizes
    """)
    result = convert_source(src)
    assert result.diagnostics == []
    code = result.code
    assert "import mindspore.dataset as ms_ds\n" in code and "from mindspore import ops as ms_ops\n" in code
    assert "    ds = " in code and "ms_ds.GeneratorDataset(ds," in code
    import numpy as np

    module: dict = {}
    exec(compile(code, "converted", "exec"), module)  # noqa: S102 - our own converted snippet
    x, y = np.arange(8, dtype=np.float32).reshape(4, 2), np.arange(4, dtype=np.int64)
    assert module["batches"](x, y) == [2, 2, 2]


def test_a_method_does_not_see_its_class_body_names():
    """Python skips class bodies when a nested function looks a name up: in ``def remove_weight_norm(self)`` the call
    ``remove_weight_norm(m)`` is the module's import (HiFi-GAN), not the method the class body binds."""
    code = textwrap.dedent("""\
        import torch.nn as nn
        from torch.nn.utils import remove_weight_norm


        class Net(nn.Module):
            relu = nn.ReLU

            def remove_weight_norm(self):
                for m in self.convs:
                    remove_weight_norm(m)

            def forward(self, x):
                return relu(x)
    """)
    module = cst.parse_module(code)
    builder = build_scopes(module)
    cls = next(n for n in module.body if isinstance(n, cst.ClassDef))
    method = next(n for n in cls.body.body if isinstance(n, cst.FunctionDef))
    scope = builder.scopes[id(method)]
    assert scope.resolve_torch(cst.parse_expression("remove_weight_norm")) == "torch.nn.utils.remove_weight_norm"
    assert builder.scopes[id(cls)].resolve_torch(cst.parse_expression("relu")) == "torch.nn.ReLU"  # in the body
    assert scope.lookup("relu") == (False, None)  # not visible in a method (a NameError in Python too)
