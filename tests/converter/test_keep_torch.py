"""No half-converted line: a statement the converter cannot convert keeps its exact torch meaning (torch names in full,
``import torch`` kept) and carries its ``# mindport:`` diagnostic. A corpus of unconvertible constructs (our own) is
converted; each flagged statement must reference no MindSpore name, and must still run under torch: the converted
module is imported with real torch and MindSpore, its flagged functions are called on torch tensors and compared
with the original's, and its converted parts run on MindSpore."""
from __future__ import annotations

import ast
import io
import textwrap
import tokenize

import mindspore as ms
import numpy as np
import torch

from mindport import convert_source
from tests.source_module import load_source

CORPUS = textwrap.dedent('''\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch import Tensor

    SCALE = torch.tensor(2.0).item() + torch.get_num_interop_threads() * 0


    def bicubic_resize(x: Tensor):
        return F.kl_div(F.interpolate(x, scale_factor=2.0, mode="bicubic").log_softmax(-1), x.new_zeros(1, 1, 6, 8),
                        reduction="sum", log_target=True) * SCALE


    def strided_view(x):
        return x.as_strided((2,), (1,)) + torch.ones(1)


    def shuffled(n, seed):
        return torch.binomial(torch.full((n,), 10.0), torch.full((n,), 0.3),
                              generator=torch.Generator().manual_seed(seed)).sum(dim=0)


    def max_into(a, b, out):
        return torch.nn.ELU(alpha=0.8)(torch.max(a, b)) + out.zero_()


    def renormed_lookup(x):
        return nn.Embedding(8, 3, max_norm=1.0, dtype=torch.float64)(x.double().argmax(dim=1)).shape, F.softmax(x, dim=1)


    def autocast_double(x):
        with torch.autocast("cpu", enabled=False):
            y = x + x
        return y


    def deterministic(x):
        if torch.is_warn_always_enabled() or torch.cat([x, x], dim=0).shape[0] > 0:
            return x * 3
        return x


    def converted(x):
        return torch.relu(x).sum(dim=0)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lookup = nn.Embedding(4, 2, max_norm=1.0, padding_idx=0)
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            return self.fc(x)
''')

# (function, torch arguments): each holds flagged statements only (plus a plain return)
FLAGGED_CALLS = {
    "bicubic_resize": lambda: (torch.randn(1, 1, 3, 4, generator=torch.Generator().manual_seed(0)),),
    "strided_view": lambda: (torch.zeros(2),),
    "shuffled": lambda: (7, 3),
    "renormed_lookup": lambda: (torch.randn(1, 2, 5, 5, generator=torch.Generator().manual_seed(1)),),
    "deterministic": lambda: (torch.tensor([1.0, 2.0]),),
}


def _flagged_statements(code: str) -> list[tuple[ast.stmt, list[ast.AST]]]:
    """(statement, the nodes a flag covers): a simple statement whose line carries a trailing ``# mindport:`` comment,
    and the header of a compound statement under a ``# mindport:`` comment line."""
    flags = {tok.start[0]: tok.start[1] == 0 or code.splitlines()[tok.start[0] - 1].strip().startswith("#")
             for tok in tokenize.generate_tokens(io.StringIO(code).readline)
             if tok.type == tokenize.COMMENT and "# mindport: MP" in tok.string}
    out = []
    for node in ast.walk(ast.parse(code)):
        if not isinstance(node, ast.stmt):
            continue
        if hasattr(node, "body"):
            if node.lineno - 1 in flags and flags[node.lineno - 1]:
                header = {ast.If: ["test"], ast.While: ["test"], ast.For: ["target", "iter"], ast.With: ["items"]}
                parts = [getattr(node, f) for f in header.get(type(node), [])]
                out.append((node, [p for part in parts for p in (part if isinstance(part, list) else [part])]))
        elif any(node.lineno <= line <= node.end_lineno and not alone for line, alone in flags.items()):
            out.append((node, [node]))
    return out


def _same(a, b) -> None:
    if isinstance(a, (tuple, list, torch.Size)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype
        torch.testing.assert_close(a, b)
    else:
        assert a == b


def test_flagged_statements_keep_their_torch_meaning_and_run_under_torch(tmp_path):
    result = convert_source(CORPUS)
    code = result.code
    flagged = _flagged_statements(code)
    # every unconvertible construct of the corpus is flagged (ELU(alpha=0.8) converts since ELU takes any alpha
    # through the runtime: max_into is converted, its zero_() with it; autocast is converted: full precision)
    assert len(flagged) == 7, code
    assert len({d.line for d in result.diagnostics}) == 7
    imports = ast.parse(code).body
    ms_names = {a.asname or a.name.split(".")[0] for s in imports if isinstance(s, (ast.Import, ast.ImportFrom))
                and (getattr(s, "module", None) or s.names[0].name).split(".")[0] in ("mindspore", "mindport")
                for a in s.names}
    assert {"ms", "nn", "ops"} <= ms_names
    assert "import torch\n" in code
    for stmt, parts in flagged:
        names = {n.id for p in parts for n in ast.walk(p) if isinstance(n, ast.Name)}
        assert not names & ms_names, f"half-converted: {ast.unparse(stmt).splitlines()[0]}"
    original, converted = load_source(CORPUS, tmp_path, "torch_corpus"), load_source(code, tmp_path, "ms_corpus")
    assert converted.SCALE == original.SCALE == 2.0  # a module-level flagged line ran at import
    for name, make_args in FLAGGED_CALLS.items():
        _same(getattr(original, name)(*make_args()), getattr(converted, name)(*make_args()))
    x = np.arange(6, dtype=np.float32).reshape(3, 2) - 2
    np.testing.assert_allclose(converted.converted(ms.Tensor(x)).asnumpy(), np.maximum(x, 0).sum(0))
    np.testing.assert_allclose(converted.autocast_double(ms.Tensor(x)).asnumpy(), 2 * x)
    net = converted.Net()  # a Cell whose flagged layer is torch's, as written
    assert isinstance(net.lookup, torch.nn.Embedding) and net.lookup.max_norm == 1.0 and net.lookup.padding_idx == 0
    assert net.lookup(torch.tensor([[0, 3]])).shape == (1, 2, 2)
    assert net(ms.Tensor(x)).shape == (3, 2)


def test_a_flagged_line_names_torch_even_when_the_file_never_imported_torch_itself():
    code = convert_source("import torch.nn as nn\n\n\ndef f(c):\n"
                          "    return nn.Embedding(c, 3, max_norm=1.0), nn.ReLU()\n").code
    assert code.startswith("import torch\n")
    assert "return torch.nn.Embedding(c, 3, max_norm=1.0), torch.nn.ReLU()  # mindport: MP102" in code


def test_a_converted_header_part_stays_converted_beside_a_flagged_one():
    source = ("import torch\n\n\ndef f(x, dtype=torch.float16, g: torch.UnknownThing = None):\n"
              "    return x.to(dtype)\n")
    code = convert_source(source).code
    assert "def f(x, dtype=ms.float16, g: torch.UnknownThing = None):" in code  # only the flagged parameter is torch


def test_an_unmapped_tensor_method_is_flagged_not_left_silently():
    """A torch.Tensor method with no entry (``stft``, ``to_sparse_coo``) on a tensor is MP103, like an unmapped torch
    function; the same name on other objects (``d.values()``) is left alone. The list of torch.Tensor's methods is
    data (mappings/data/torch_tensor_methods.txt) and must match the installed torch."""
    import textwrap

    import torch

    from mindport import convert_source
    from mindport.migrator.rules.table_calls import _HANDLED_ELSEWHERE, _unmapped_tensor_methods

    source = textwrap.dedent("""\
        import torch


        def f(d):
            y = torch.randn(8)
            return d.values(), y.stft(4, return_complex=True), y.to_sparse_coo()
    """)
    result = convert_source(source)
    flagged = sorted(d.api for d in result.diagnostics if d.code == "MP103")
    assert flagged == ["torch.Tensor.stft", "torch.Tensor.to_sparse_coo"], [d.format() for d in result.diagnostics]
    installed = {n for n in dir(torch.Tensor) if not n.startswith("_") and callable(getattr(torch.Tensor, n, None))}
    assert _unmapped_tensor_methods() == frozenset(installed - _HANDLED_ELSEWHERE)
