"""A torch function kept as a value becomes a definition with torch's parameters and defaults
(``def torch_tril_indices(row, col, offset=0, *, dtype=..., layout=...)``, factories.factory_parameters). Torch's
signatures give some defaults as torch names (``dtype=torch.long``, ``layout=torch.strided``,
``memory_format=torch.preserve_format``, all_reduce's ``op=ReduceOp.SUM``): written verbatim they were a NameError
when the converted file was imported (no ``import torch`` is left; ``ReduceOp`` was never imported:
lucidrains/vector-quantize-pytorch's ``distributed.all_reduce if use_ddp else noop``, 13 classes of it failed to
import). Each such default now goes through its own attribute entry (factories.torch_default).

Enumerated from the tables: every entry whose signature has a non-literal default is kept as a value in a file of
its own, converted, and that file is imported under MindSpore; its definitions' defaults name no torch."""
from __future__ import annotations

import ast
import importlib.util
import sys

import pytest

from mindport.mappings import bundled_registry
from mindport.migrator import convert_source


def _entries_with_name_defaults():
    out = []
    for entry in bundled_registry().entries.values():
        if entry.resolve("nn")[0] is None:
            continue  # no MindSpore target (torch.Tensor.chalf): no definition; flagged (the test below)
        for p in entry.signature or ():
            if p.default is None:
                continue
            try:
                ast.literal_eval(p.default)
            except (ValueError, SyntaxError):
                out.append(entry.torch)
                break
    return sorted(set(out))


ENTRIES = _entries_with_name_defaults()


def test_the_tables_have_such_defaults():
    # the enumeration is not empty (dtype, layout, memory format and reduce-op defaults at least)
    assert len(ENTRIES) >= 30
    assert "torch.distributed.all_reduce" in ENTRIES and "torch.tril_indices" in ENTRIES


def _value_source(name: str) -> str:
    if name.startswith("torch.Tensor."):
        return f"import torch\n\nKEPT = {{'f': torch.Tensor.{name.rsplit('.', 1)[1]}}}\n"
    module, _, leaf = name.rpartition(".")
    return f"import torch\nimport {module}\n\nKEPT = {{'f': {module}.{leaf}}}\n"


@pytest.mark.parametrize("name", ENTRIES)
def test_a_kept_value_converts_to_a_file_that_imports(name, tmp_path):
    out = convert_source(_value_source(name), filename="kept.py").code
    tree = ast.parse(out)
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        for default in fn.args.defaults + [d for d in fn.args.kw_defaults if d is not None]:
            text = ast.unparse(default)
            assert not text.startswith("torch.") and text != "ReduceOp.SUM", (fn.name, text)
    path = tmp_path / "kept.py"
    path.write_text(out)
    spec = importlib.util.spec_from_file_location(f"kept_{abs(hash(name))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # a NameError here was the defect
    assert "f" in module.KEPT


def test_the_converted_definition_runs_with_its_defaults():
    import numpy as np
    import torch

    source = ("import torch\n\nREGISTRY = {'tril': torch.tril_indices}\n\n\ndef run(n):\n"
              "    return REGISTRY['tril'](n, n)\n")
    out = convert_source(source, filename="reg.py").code
    assert "import torch" not in out
    namespace: dict = {}
    exec(compile(out, "reg.py", "exec"), namespace)
    got = namespace["run"](4)
    want = torch.tril_indices(4, 4)
    assert str(got.dtype) == "Int64"
    np.testing.assert_array_equal(got.asnumpy(), want.numpy())


UNSUPPORTED = sorted(e.torch for e in bundled_registry().entries.values()
                     if not e.supported and e.torch.startswith("torch.Tensor.") and e.torch.count(".") == 2)


def test_an_unsupported_method_kept_as_a_value_is_flagged_and_left_to_torch():
    # torch.Tensor.chalf kept as a value was written ``ms.Tensor.chalf`` (its prefix's target), an AttributeError on
    # import; now MP101 with the entry's reason, and the line keeps torch's meaning. Every such method in the tables.
    assert UNSUPPORTED and "torch.Tensor.chalf" in UNSUPPORTED
    for name in UNSUPPORTED:
        result = convert_source(_value_source(name), filename="kept.py")
        assert f"torch.Tensor.{name.rsplit('.', 1)[1]}" in result.code, (name, result.code)
        assert any(d.code == "MP101" and d.api == name for d in result.diagnostics), (name, result.diagnostics)
