"""The fast path (mindport/migrator/fast.py) gives the LibCST pipeline's output byte for byte.

Every case converts the same source twice, ``convert_source(code)`` and ``convert_source(code, fast=False)``, and
compares the code, the number of converted sites and the diagnostics. The cases that the fast path is meant to take
also check that it took them (no statement handed to LibCST), so a decline cannot make a comparison vacuous.
``MINDPORT_CROSSCHECK=1 pytest`` runs the same comparison under every other test in the suite.
"""
from __future__ import annotations

import ast
import importlib.util
import io
import random
import tokenize
from pathlib import Path

import pytest

from mindport import convert_source
from mindport.mappings import load_registry
from mindport.migrator.ast_names import AstScopes
from mindport.migrator.context import Options
from mindport.migrator.fast import convert_fast
from mindport.migrator.names import ScopeBuilder, build_scopes

import libcst as cst

ROOT = Path(__file__).resolve().parents[2]
ZOO = sorted((ROOT / "tests" / "zoo" / "models").glob("*.py"))


def _both(code: str, **options):
    fast = convert_source(code, "case.py", **options)
    slow = convert_source(code, "case.py", fast=False, **options)
    assert fast.code == slow.code
    assert fast.converted_sites == slow.converted_sites
    assert [(d.code, d.line, d.column, d.message) for d in fast.diagnostics] == \
        [(d.code, d.line, d.column, d.message) for d in slow.diagnostics]
    return fast


def _libcst_statements(code: str, target: str = "nn") -> int | None:
    """How many top-level statements the fast path handed to LibCST (None: it did not take the file)."""
    result = convert_fast(code, "case.py", load_registry(), Options(target=target))
    return None if result is None else result[1].libcst_statements


@pytest.mark.parametrize("path", ZOO, ids=lambda p: p.stem)
def test_zoo_model_converts_the_same_on_both_paths(path):
    code = path.read_text(encoding="utf-8")
    _both(code)
    assert _libcst_statements(code) is not None


def test_generated_corpus_converts_the_same_on_both_paths(tmp_path):
    spec = importlib.util.spec_from_file_location("convert_bench", ROOT / "benchmarks" / "convert_bench.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    lines, files = bench.build_corpus(tmp_path, 2500, seed=7)
    assert lines >= 2500
    handed = total = 0
    for path in sorted(tmp_path.rglob("*.py")):
        code = path.read_text(encoding="utf-8")
        _both(code)
        handed += _libcst_statements(code) or 0
        total += len(ast.parse(code).body)
    assert handed < total * 0.1  # the fast path takes nearly all of it


HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"

TAKEN = {
    "keywords, renames, emitted defaults":
        "conv = nn.Conv2d(3, 16, 3, padding=1, bias=False)\nbn = nn.BatchNorm2d(16, momentum = 0.2)\n",
    "a multi-line call with comments and a trailing comma":
        "net = nn.Sequential(\n    nn.Linear(4, 8),  # in\n    nn.ReLU(),\n    nn.Linear(8, 2),  # out\n)\n",
    "the last argument on its own line":
        "layer = nn.Linear(\n    4,\n    8\n)\n",
    "a trailing comma without a line break":
        "layer = nn.Linear(4, 8, )\nx = torch.cat([torch.ones(2), torch.zeros(2)], 0,)\n",
    "varargs sizes and nested calls":
        "x = torch.zeros(2, 3)\ny = F.relu(torch.flatten(x, 1) + torch.ones(2, 3).sum(1, keepdim=True))\n",
    "tensor methods on evident tensors, not on numpy":
        "import numpy as np\n\ndef f(x):\n    a = np.zeros(3)\n    return x.view(2, -1).transpose(0, 1), a.sum(axis=0)\n",
    "a module class: forward, super().forward, the base":
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(2, 2)\n\n"
        "    def forward(self, x):\n        return self.fc(x)\n\n\nclass Sub(Net):\n    def forward(self, x):\n"
        "        return super().forward(x) + self.forward(x)\n",
    "tensor idioms":
        "def f(x, m):\n    n = x.size(1)\n    s = x.size()\n    a = x.cpu().numpy()\n    d = x.detach()\n    h = x.float()\n"
        "    y = x.to(torch.float16)\n    z = x.to(x.device)\n    m.eval()\n    m.train(False)\n    return m.parameters()\n",
    "module iteration and init loops with isinstance narrowing":
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.bn = nn.BatchNorm2d(4)\n"
        "        for m in self.modules():\n            if isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):\n"
        "                nn.init.constant_(m.weight, 1)\n                nn.init.constant_(m.bias, 0)\n"
        "            elif isinstance(m, nn.Linear):\n                nn.init.normal_(m.weight, std=0.02)\n"
        "        for name, child in self.named_children():\n            pass\n",
    "buffers":
        "class Norm(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('mean', torch.zeros(3))  # kept\n"
        "        self.register_buffer(\"std\", torch.ones(3), persistent=False)\n",
    "a local alias and type checks":
        "act = F.relu\n\n\ndef f(x, m):\n    return act(x, inplace=False) if isinstance(m, nn.Conv2d) else x\n",
    "decorators, lambdas, comprehensions, annotations":
        "import functools\n\n\n@functools.lru_cache\ndef f(x: torch.Tensor, g=lambda t: torch.exp(t)) -> torch.Tensor:\n"
        "    return [torch.sigmoid(v) for v in x], {k: F.relu(v) for k, v in {}.items()}\n",
    "a docstring and non-ASCII text":
        '"""Modèle — résumé."""\n\n\ndef f(x):\n    s = "é"  # ünïcode\n    return torch.tanh(x), s\n',
    "parameter containers (a runtime import)":
        "class P(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.ps = nn.ParameterList([nn.Parameter(torch.ones(2))])\n",
    "renamed layer parameters (tied weights, BatchNorm statistics)":
        "class E(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.emb = nn.Embedding(4, 2)\n        self.head = nn.Linear(2, 4)\n        self.bn = nn.BatchNorm1d(4)\n"
        "        self.head.weight = self.emb.weight\n\n    def forward(self, x):\n"
        "        return self.head(self.emb(x)) - self.bn.running_mean\n",
    "dtypes and attribute references":
        "def f(x):\n    return x.type(torch.float32), torch.float64, isinstance(x, torch.Tensor)\n",
}


@pytest.mark.parametrize("body", TAKEN.values(), ids=TAKEN.keys())
def test_fast_path_takes_the_common_cases_and_matches(body):
    code = HEAD + body
    _both(code)
    assert _libcst_statements(code) == 0


DECLINED = {
    "an unsupported API (a diagnostic)": "def f(x):\n    return torch.nn.functional.weight_norm(x)\n",
    "an unknown torch API": "def f(x):\n    return torch.not_an_api(x)\n",
    "a parenthesized argument": "layer = nn.Linear((4), 8)\n",
    "an edit inside an f-string": "def f(x):\n    return f'{torch.exp(x)}'\n",
    "a device assignment": "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n",
    "no_grad blocks": "def f(m, x):\n    with torch.no_grad():\n        return m(x)\n",
    "a torch import inside a function": "def f(x):\n    from torch import nn as tnn\n    return tnn.ReLU()(x)\n",
    "in-place on an indexed view": "def f(h):\n    h[0].zero_()\n    return h\n",
}


@pytest.mark.parametrize("body", DECLINED.values(), ids=DECLINED.keys())
def test_declined_statements_go_through_libcst_with_the_same_result(body):
    code = HEAD + body
    _both(code)
    assert _libcst_statements(code) != 0


FILES = {
    "a training loop (the whole file is LibCST's)":
        "model = nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\nfor x in [torch.ones(2)]:\n"
        "    opt.zero_grad()\n    loss = model(x).sum()\n    loss.backward()\n    opt.step()\n",
    "top-level statements sharing a line": "a = torch.ones(2); b = torch.zeros(2)\n",
    "no torch at all": "import numpy as np\n\nx = np.zeros(3)\n",
    "an empty file": "",
    "a syntax error": "def f(:\n",
    "comments before and between removed imports":
        "# header\n\nimport torch  # the framework\n# between\nimport torch.nn as nn\n\nx = nn.ReLU()\n",
    "a flagged API keeps its torch import": "import torch\n\nx = torch.not_an_api(1)\ny = torch.ones(2)\n",
    "from-imports partly kept":
        "from torch import nn, not_an_api\n\ny = not_an_api(2)\nz = nn.ReLU()\n",
    "imports after a docstring, none to replace":
        '"""Doc."""\nimport os\nfrom . import local\n\ntry:\n    import torch\nexcept ImportError:\n    torch = None\n',
}


@pytest.mark.parametrize("code", FILES.values(), ids=FILES.keys())
def test_whole_file_cases_match(code):
    _both(code)


def test_mint_profile_matches():
    _both(HEAD + TAKEN["keywords, renames, emitted defaults"] + TAKEN["tensor idioms"], target="mint")


@pytest.mark.parametrize("path", ZOO, ids=lambda p: p.stem)
def test_ast_scopes_equal_libcst_scopes(path):
    """Both scope builders record the same names, kinds and aliases, scope by scope, in source order."""
    code = path.read_text(encoding="utf-8")
    module = cst.parse_module(code)
    built = build_scopes(module)
    tree = ast.parse(code)
    ast_scopes = AstScopes(tree, code)

    def order_cst(builder: ScopeBuilder):
        nodes = []

        class Collect(cst.CSTVisitor):
            def visit_FunctionDef(self, node):
                nodes.append(node)

            def visit_ClassDef(self, node):
                nodes.append(node)

            def visit_Lambda(self, node):
                nodes.append(node)

        module.visit(Collect())
        return [builder.scopes[id(n)] for n in nodes]

    def order_ast():
        nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                                             ast.Lambda))]
        nodes.sort(key=lambda n: (min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", ()))]),
                                  n.col_offset))
        return [ast_scopes.scopes[id(n)] for n in nodes]

    pairs = [(built.module_scope, ast_scopes.module_scope), *zip(order_cst(built), order_ast(), strict=True)]
    for left, right in pairs:
        assert (left.names, left.kinds, left.aliases) == (right.names, right.kinds, right.aliases)


COMMENTED = {
    "a reference in parentheses with a comment": "x = (  # the dtype\n    torch.float32\n)\n",
    "a comment after a reference in parentheses": "x = (torch.float32  # the dtype\n)\n",
    "references in a list with comments": "acts = [\n    nn.ReLU,  # first\n    nn.GELU,\n]\n",
    "a call in parentheses with a comment": "def f(x):\n    return (  # size\n        x.size(1)\n    )\n",
    "a generator argument": "def f(ts):\n    return torch.cat(t for t in ts), torch.sum(v * 2 for v in ts)\n",
}


@pytest.mark.parametrize("body", COMMENTED.values(), ids=COMMENTED.keys())
def test_comments_around_replaced_nodes_match(body):
    _both(HEAD + body)


def _perturb(code: str, rng: random.Random) -> str:
    """Layout changes that keep the program: comments and line breaks inside brackets, redundant parentheses around
    numbers and names in argument positions, spaces around '=' and '.'."""
    tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    lines = code.splitlines(keepends=True)
    inserts = []  # (row, col, text)
    depth = 0
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        if depth <= 0:
            continue
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        prev = tokens[i - 1]
        r = rng.random()
        if tok.type == tokenize.OP and tok.string in ",(" and r < 0.15:
            inserts.append((tok.end[0], tok.end[1], "  # ü note\n        "))
        elif tok.type in (tokenize.NUMBER, tokenize.NAME) and r < 0.15 and prev.string in ("(", ",", "=") \
                and nxt is not None and nxt.string in (",", ")") and tok.string not in ("lambda", "for", "in", "if"):
            inserts.append((tok.start[0], tok.start[1], "("))
            inserts.append((tok.end[0], tok.end[1], ")"))
        elif tok.type == tokenize.OP and tok.string == "=" and r < 0.2:
            inserts.append((tok.start[0], tok.start[1], " "))
            inserts.append((tok.end[0], tok.end[1], " "))
        elif tok.type == tokenize.OP and tok.string == ")" and prev.string not in (",", "(") and r < 0.1:
            inserts.append((tok.start[0], tok.start[1], ",\n    "))
    for row, col, text in sorted(inserts, key=lambda x: (x[0], x[1]), reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + text + line[col:]
    return "".join(lines)


@pytest.mark.parametrize("seed", range(3))
def test_perturbed_layouts_convert_the_same(seed):
    """The zoo with its layout disturbed (comments and line breaks inside brackets, redundant parentheses, spaces
    around '=', trailing commas): both paths give the same output for every variant that still parses."""
    checked = 0
    for path in ZOO:
        code = _perturb(path.read_text(encoding="utf-8"), random.Random(f"{seed}{path.name}"))
        try:
            ast.parse(code)
        except SyntaxError:
            continue  # a parenthesized parameter name and the like: not a program
        _both(code)
        checked += 1
    assert checked >= 10


def test_parentheses_and_their_comments_survive_a_rewritten_expression():
    code = HEAD + "x = (  # the dtype\n    torch.float32\n)\n\n\ndef f(t):\n    return (t.size(1)  # columns\n            )\n"
    result = _both(code)
    assert "x = (  # the dtype\n    ms.float32\n)" in result.code
    assert "return (t.shape[1]  # columns\n            )" in result.code


TRAINING_SCRIPT = HEAD + '''from torch.utils.data import DataLoader, Dataset


class Pairs(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc(x).squeeze(-1)


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def reset():
    optimizer.zero_grad()


def train(x, y):
    loader = DataLoader(Pairs(x, y), batch_size=4)
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = F.mse_loss(model(xb), yb)
        loss.backward()
        optimizer.step()
    return loss
'''


def test_training_statements_share_the_rules_state_and_the_rest_is_fast():
    """The Dataset's columns, the optimizer's name (its zero_grad outside the loop disappears) reach the statements
    that use them; the model class takes the fast path."""
    result = _both(TRAINING_SCRIPT)
    handed = _libcst_statements(TRAINING_SCRIPT)
    assert handed is not None and 0 < handed < len(ast.parse(TRAINING_SCRIPT).body) - 4
    assert "def reset():\n    pass" in result.code  # optimizer is known from an earlier statement
    assert "GeneratorDataset(Pairs(x, y), column_names=['data', 'label']" in result.code  # Pairs' two columns
    assert "grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)" in result.code
    assert "class Net(nn.Cell):" in result.code
