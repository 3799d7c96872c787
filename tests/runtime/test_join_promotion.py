"""torch's joins of a sequence of tensors (cat, stack, column_stack, ...) promote mixed dtypes to their common type;
MindSpore 2.10's Concat/Stack refuse them. mindport.runtime.promotion lists the family (enumerated from torch here)
and torch's promotion rules as data; the converter wraps the tensors in ``mp_tensor.promoted`` where a member's dtype
may differ and keeps MindSpore's own call where the facts say they have one. Expected values from torch."""
import importlib.util
import itertools
import sys
import tempfile
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
import torch

from mindport.migrator import convert_source
from mindport.runtime import promotion

DTYPES = ("bool", "int32", "int64", "float16", "float32", "float64")
FAMILY = promotion.JOINS + promotion.VARARG_JOINS


def test_family_enumerated_from_torch():
    """Every public torch function whose schema takes a Tensor[] first and gives one Tensor is placed by the data, and
    the ones placed as joins promote in torch (the others refuse mixed dtypes or are not torch.<name> functions)."""
    found = set()
    for schema in torch._C._jit_get_all_schemas():
        arguments = schema.arguments
        if schema.name.startswith("aten::") and arguments and str(arguments[0].type) == "List[Tensor]" \
                and len(schema.returns) == 1 and str(schema.returns[0].type) == "Tensor" \
                and not schema.name[6:].startswith("_"):
            found.add(schema.name[6:])
    placed = {n.rpartition(".")[2] for n in FAMILY + promotion.SAME_DTYPE_JOINS} | set(promotion.OTHER_JOINS)
    assert found - placed == set()
    a, b = torch.ones(2, 2), torch.ones(2, 2, dtype=torch.int64)
    for name in promotion.JOINS:
        assert getattr(torch, name[6:])([a, b]).dtype == torch.float32, name
    for name in promotion.VARARG_JOINS:
        assert getattr(torch, name[6:])(a, b).dtype == torch.float32, name
    for name in promotion.SAME_DTYPE_JOINS:
        fn = eval(name, {"torch": torch})  # noqa: S307 - a dotted torch name of the data
        with pytest.raises(RuntimeError):
            fn([a, b]) if "multi_dot" in name else fn(a.ravel(), b.ravel()) if "cartesian" in name else fn(a, b)


def test_promote_types_is_torchs():
    for a, b in itertools.product(promotion.DTYPE_ORDER, repeat=2):
        expected = str(torch.promote_types(getattr(torch, a), getattr(torch, b))).replace("torch.", "")
        assert promotion.promote_types(a, b) == expected, (a, b)


def _converted(name: str):
    call = f"{name}(a, b)" if name in promotion.VARARG_JOINS else f"{name}([a, b])"
    result = convert_source(f"import torch\n\n\ndef join(a, b):\n    return {call}\n")
    assert "mp_tensor.promoted" in result.code, result.code
    path = Path(tempfile.mkdtemp(prefix="join_")) / f"converted_{name.replace('.', '_')}.py"
    path.write_text(result.code, encoding="utf-8")  # a file: GRAPH_MODE reads the function's source
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # the graph compiler imports the function's module by name
    spec.loader.exec_module(module)
    return module.join


def _inputs(a: str, b: str):
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 5, (2, 3)), rng.integers(0, 5, (2, 3))
    x = x > 2 if a == "bool" else x.astype(a)
    y = y > 2 if b == "bool" else y.astype(b)
    return x, y


@pytest.mark.parametrize("name", FAMILY)
def test_family_matches_torch_over_dtype_pairs(name):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    join = _converted(name)
    fn = eval(name, {"torch": torch})  # noqa: S307
    for a, b in itertools.product(DTYPES, repeat=2):
        x, y = _inputs(a, b)
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)
        expected = fn(tx, ty) if name in promotion.VARARG_JOINS else fn([tx, ty])
        got = join(ms.Tensor(x), ms.Tensor(y))
        assert str(got.dtype).lower().replace("bool_", "bool") == str(expected.dtype).replace("torch.", ""), (a, b)
        np.testing.assert_array_equal(got.asnumpy(), expected.numpy(), err_msg=f"{name} {a} {b}")


@pytest.mark.parametrize("name", FAMILY)
def test_family_in_graph_mode(name):
    join = _converted(name)
    fn = eval(name, {"torch": torch})  # noqa: S307
    try:
        ms.set_context(mode=ms.GRAPH_MODE)
        compiled = ms.jit(join)
        for a, b in (("float32", "int64"), ("bool", "float16")):
            x, y = _inputs(a, b)
            tx, ty = torch.from_numpy(x), torch.from_numpy(y)
            expected = fn(tx, ty) if name in promotion.VARARG_JOINS else fn([tx, ty])
            got = compiled(ms.Tensor(x), ms.Tensor(y))
            assert str(got.dtype).lower() == str(expected.dtype).replace("torch.", ""), (a, b)
            np.testing.assert_array_equal(got.asnumpy(), expected.numpy())
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_native_where_the_facts_say_one_dtype():
    """Floating members by construction, one member, the same expression: MindSpore's own join, no helper."""
    code = convert_source(
        "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(3, 4)\n\n"
        "    def forward(self, x, c, xs):\n"
        "        a = torch.cat([self.fc(x), torch.sigmoid(self.fc(x))], dim=1)\n"
        "        b = torch.stack([x, x])\n        d = torch.stack([self.fc(t) for t in xs])\n"
        "        e = torch.column_stack([x, c])\n        return a, b, d, e\n").code
    assert "ops.cat([self.fc(x)" in code and "ops.stack([x, x])" in code and "ops.stack([self.fc(t)" in code
    assert "ops.column_stack(mp_tensor.promoted([x, c]))" in code


def test_native_for_one_dtype_sequences_and_members_of_one_name():
    """Pieces of one tensor, torch.meshgrid's grids (torch refuses mixed dtypes there), members derived from one name
    by dtype-keeping calls: MindSpore's own join; a member of another name: the helper."""
    code = convert_source(
        "import torch\n\n\ndef f(x, e, c, pos):\n"
        "    a = torch.cat([x, x.conj()], dim=-1)\n"
        "    b = torch.cat([e, torch.zeros_like(e[:, :1])], dim=-1)\n"
        "    g = torch.stack(torch.meshgrid(pos, pos, indexing='ij'))\n"
        "    h = torch.cat(torch.chunk(x, 2, dim=1), dim=0)\n"
        "    k = torch.cat([x, c])\n"
        "    return a, b, g, h, k\n").code
    assert code.count("mp_tensor.promoted") == 1 and "ops.cat(mp_tensor.promoted([x, c]))" in code, code


def test_observed_one_dtype_keeps_native(tmp_path):
    """A recorded torch run (mindport.observed) that saw one dtype at a join: MindSpore's own call there; mixed
    dtypes seen at another: the helper stays."""
    from mindport.observed import record
    from mindport.migrator import convert_path
    src = tmp_path / "proj"
    src.mkdir()
    (src / "m.py").write_text("import torch\n\n\ndef same(a, b):\n    return torch.cat([a, b])\n\n\n"
                              "def mixed(a, b):\n    return torch.cat([a, b])\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("m_fix26", src / "m.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with record(src) as facts:
        module.same(torch.ones(2), torch.zeros(2))
        module.mixed(torch.ones(2), torch.zeros(2, dtype=torch.int64))
    assert facts.uniform_sites("m.py") == ((5, 11, 5, 28),)
    facts.save(tmp_path / "facts.json")
    from mindport import observed
    out = tmp_path / "out"
    convert_path(src, out, facts=observed.load(tmp_path / "facts.json"))
    code = (out / "m.py").read_text(encoding="utf-8")
    assert code.count("mp_tensor.promoted") == 1 and "return ops.cat([a, b])" in code, code


def test_legacy_empty_cat_promotes():
    from mindport.runtime.tensor import cat
    x = np.arange(6).reshape(2, 3)
    got = cat((ms.Tensor(np.zeros(0, np.float32)), ms.Tensor(x.astype(np.float32)), ms.Tensor(x)), 0)
    expected = torch.cat([torch.tensor([]), torch.from_numpy(x.astype(np.float32)), torch.from_numpy(x)], 0)
    assert str(got.dtype) == "Float32" and expected.dtype == torch.float32
    np.testing.assert_array_equal(got.asnumpy(), expected.numpy())
