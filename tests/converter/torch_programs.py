"""Random torch-style programs for the idempotence checks (tests/converter/test_idempotence.py) and the sweep
benchmark (benchmarks/idempotence_sweep.py).

``torch_program(rng, skip)`` writes a small, valid module in the shapes model code takes: imports under the usual aliases,
an ``nn.Module`` with layers and a ``forward`` that chains tensor methods and functions, helpers, a training step,
comments and blank lines. ``plain_program(rng)`` writes Python that mentions no torch name at all, with the layout
quirks a converter must keep byte for byte (blank lines with spaces, tabs, CRLF, comments). ``rng`` is a
``random.Random`` (hypothesis's ``st.randoms()`` gives one it can shrink). ``skip``: templates of the vocabulary
below to leave out (the test suite leaves out the ones behind known converter bugs, each an xfail of its own).
"""
from __future__ import annotations

import random

IMPORTS = [
    "import torch", "import torch.nn as nn", "import torch.nn.functional as F", "from torch import nn",
    "import numpy as np", "import math", "from torch.utils.data import DataLoader, TensorDataset",
]
LAYERS = [
    "nn.Linear({a}, {b})", "nn.Linear({a}, {b}, bias=False)", "nn.Conv2d({c}, {d}, {k})",
    "nn.Conv2d({c}, {d}, {k}, stride={s}, padding={p})", "nn.BatchNorm2d({d})", "nn.BatchNorm1d({b}, momentum=0.{m})",
    "nn.ReLU()", "nn.ReLU(inplace=True)", "nn.GELU()", "nn.Dropout({f})", "nn.LayerNorm({b})",
    "nn.Embedding({a}, {b})", "nn.MaxPool2d({k})", "nn.MaxPool2d({k}, stride={s})", "nn.AdaptiveAvgPool2d(1)",
    "nn.Sequential(nn.Linear({a}, {b}), nn.ReLU())", "nn.ModuleList([nn.Linear({b}, {b}) for _ in range({s})])",
    "nn.Softmax(dim=-1)", "nn.Identity()", "nn.Flatten()", "nn.Tanh()", "nn.Sigmoid()",
]
METHODS = [
    ".view({x}.size(0), -1)", ".reshape(-1, {b})", ".permute(0, 2, 1)", ".transpose(1, 2)", ".squeeze({dim})",
    ".unsqueeze({dim})", ".flatten(1)", ".contiguous()", ".float()", ".sum(dim={dim})", ".mean(dim={dim}, keepdim=True)",
    ".max(dim={dim})[0]", ".detach()", ".clone()", ".abs()", ".exp()", ".sigmoid()", ".relu()", ".t()",
    ".softmax(dim=-1)", ".clamp(min=0.0)", ".pow(2)", ".sqrt()", ".neg()", ".chunk(2, dim={dim})[0]",
    ".to(torch.float32)", ".type_as({y})", ".masked_fill({y} > 0, 0.0)", ".expand_as({y})", ".repeat(1, 2)",
    ".size()", ".dim()", ".numel()", ".ndimension()", ".argmax(dim={dim})", ".norm(dim=-1)", ".std(dim={dim})",
    ".cumsum(dim={dim})", ".split(2, dim={dim})[0]", ".all()", ".any()", ".long()", ".int()", ".bool()",
    ".new_zeros(({a}, {b}))", ".view_as({y})", ".topk(2)[0]", ".sort(dim={dim})[0]", ".log_softmax(dim={dim})",
    ".prod(dim={dim})", ".argmin()", ".min(dim={dim}, keepdim=True)[1]", ".unbind(0)[0]", ".square()",
    ".softmax({dim})", ".squeeze()", ".sum()", ".mean()", ".max()", ".size(-1)", ".shape[0]", ".T",
]
FUNCTIONS = [
    "torch.relu({e})", "F.relu({e})", "torch.sigmoid({e})", "F.softmax({e}, dim=-1)", "F.gelu({e})",
    "torch.cat([{e}, {y}], dim={dim})", "torch.stack([{e}, {y}])", "torch.matmul({e}, {y})", "torch.tanh({e})",
    "torch.flatten({e}, 1)", "torch.sum({e}, dim={dim})", "torch.mean({e})", "torch.zeros_like({e})",
    "torch.ones({a}, {b})", "torch.zeros({a})", "torch.arange({a})", "torch.where({e} > 0, {e}, {y})",
    "F.dropout({e}, p=0.{m}, training=self.training)", "torch.clamp({e}, 0, 1)", "torch.exp({e})",
    "F.layer_norm({e}, ({b},))", "torch.max({e})", "torch.transpose({e}, 0, 1)", "torch.squeeze({e})",
    "torch.bmm({e}, {y})", "torch.einsum('ij,jk->ik', {e}, {y})", "F.pad({e}, (1, 1))",
    "torch.tensor([{a}, {b}])", "torch.randn({a}, {b})", "F.mse_loss({e}, {y})",
    "torch.split({e}, 2, dim={dim})[0]", "torch.chunk({e}, 2)[1]", "torch.argmax({e}, dim={dim})",
    "F.normalize({e}, dim={dim})", "torch.softmax({e}, dim={dim})", "torch.log_softmax({e}, -1)",
    "F.cross_entropy({e}, {y})", "torch.norm({e})", "torch.full(({a}, {b}), 0.5)", "torch.eye({a})",
    "torch.linspace(0, 1, {a})", "torch.abs({e}).sum()", "torch.sqrt({e} + 1e-6)", "torch.min({e}, {y})",
    "torch.allclose({e}, {y})", "torch.isnan({e}).any()", "torch.sort({e}, dim={dim})[0]", "torch.unsqueeze({e}, 0)",
    "torch.permute({e}, (1, 0))", "torch.reshape({e}, (-1,))", "torch.mm({e}, {y})", "torch.diag({e})",
]
STATEMENTS = [
    "{x} = {e}", "{x} = {e}  # {comment}", "if {x}.dim() > {dim}:\n{i}    {x} = {e}", "return {e}",
    "{x} = self.{layer}({x})", "with torch.no_grad():\n{i}    {x} = {e}", "{x} = {x}.to(device)",
    "n = {x}.size({dim})", "shape = {x}.shape", "{x} = {x} + {e}", "value = {e}.item()",
    "array = {e}.detach().cpu().numpy()", "{x}, {y} = {e}, {y}", "assert {x}.shape[0] > 0",
    "for i in range({s}):\n{i}    {x} = {e}", "{x} += 1", "print({x}.size())",
]
COMMENTS = ["keep the batch", "TODO: faster", "shape: (N, C)", "see the paper, eq. 3", "torch-style comment"]


class _Writer:
    def __init__(self, rng: random.Random, skip=frozenset()) -> None:
        self.rng = rng
        self.skip = frozenset(skip)

    def pick(self, items):
        items = [item for item in items if item not in self.skip] or items
        return items[self.rng.randrange(len(items))]

    def numbers(self) -> dict:
        r = self.rng
        return {"a": r.randint(1, 64), "b": r.randint(1, 64), "c": r.choice([1, 3, 16]), "d": r.choice([8, 16, 32]),
                "k": r.choice([1, 3, 5]), "s": r.randint(1, 3), "p": r.randint(0, 2), "f": r.choice(["0.1", "0.5"]),
                "m": r.randint(1, 9), "dim": r.choice([-1, 0, 1, 2])}

    def expression(self, x: str, y: str, depth: int) -> str:
        values = self.numbers()
        if depth <= 0 or self.rng.random() < 0.25:
            return self.pick([x, y, f"self.fc({x})" if self.rng.random() < 0.2 else x, str(values["a"])])
        inner = self.expression(x, y, depth - 1)
        if self.rng.random() < 0.5:
            template = self.pick(METHODS)
            receiver = inner if inner.isidentifier() or inner.endswith(")") else f"({inner})"
            return receiver + template.format(x=x, y=y, **values)
        return self.pick(FUNCTIONS).format(e=inner, y=y, **values)

    def statement(self, x: str, y: str, indent: str, layers: list[str], depth: int) -> str:
        values = self.numbers()
        layer = self.pick(layers) if layers else "fc"
        template = self.pick(STATEMENTS)
        if "self." in template and not layers:
            template = "{x} = {e}"
        expression = self.expression(x, y, depth)
        if expression.isdigit():  # `16.item()` is not Python
            expression = f"torch.tensor({expression})"
        text = template.format(x=x, y=y, e=expression, i=indent, layer=layer,
                               comment=self.pick(COMMENTS), **values)
        return "\n".join(indent + line if n == 0 else line for n, line in enumerate(text.split("\n")))

    def module_class(self, name: str) -> str:
        rng = self.rng
        layers = [f"layer{i}" for i in range(rng.randint(1, 4))]
        lines = [f"class {name}(nn.Module):"]
        if rng.random() < 0.5:
            lines.append('    """A generated model."""\n')
        lines += ["    def __init__(self):", f"        super({name}, self).__init__()" if rng.random() < 0.3
                  else "        super().__init__()"]
        for layer in layers:
            lines.append(f"        self.{layer} = {self.pick(LAYERS).format(**self.numbers())}")
        if rng.random() < 0.3:
            lines.append(f"        self.register_buffer('scale', torch.ones({rng.randint(1, 8)}))")
        lines += ["", "    def forward(self, x, y=None):"]
        if rng.random() < 0.5:
            lines.append("        y = x if y is None else y")
        for _ in range(rng.randint(1, 5)):
            statement = self.statement("x", "y", "        ", layers, rng.randint(0, 3))
            if statement.lstrip().startswith("return"):
                break
            lines.append(statement)
        lines.append(f"        return {self.expression('x', 'y', rng.randint(0, 3))}")
        return "\n".join(lines) + "\n"

    def helper(self, name: str) -> str:
        body = [self.statement("x", "y", "    ", [], self.rng.randint(0, 3)) for _ in range(self.rng.randint(1, 3))]
        body = [line.replace("self.training", "True").replace("self.fc(", "torch.relu(") for line in body]
        body = [line for line in body if not line.lstrip().startswith("return")]
        return f"def {name}(x, y):\n" + "\n".join(body) + f"\n    return {self.expression('x', 'y', 2)}\n" \
            .replace("self.fc(", "torch.relu(").replace("self.training", "True")

    def training(self, model: str) -> str:
        lr = self.pick(["1e-3", "0.01", "0.1"])
        optimizer = self.pick([f"torch.optim.Adam(model.parameters(), lr={lr})",
                               f"torch.optim.SGD(model.parameters(), lr={lr}, momentum=0.9)",
                               f"torch.optim.AdamW(model.parameters(), lr={lr}, weight_decay=0.01)"])
        return (f"def train(data, target):\n    model = {model}()\n    optimizer = {optimizer}\n"
                "    criterion = nn.CrossEntropyLoss()\n    for step in range(3):\n        optimizer.zero_grad()\n"
                "        loss = criterion(model(data), target)\n        loss.backward()\n        optimizer.step()\n"
                "    return model\n")


def torch_program(rng: random.Random, skip=frozenset()) -> str:
    """A small torch-style module (valid Python)."""
    writer = _Writer(rng, skip)
    imports = ["import torch", "import torch.nn as nn"] + rng.sample(IMPORTS[2:], rng.randint(0, 3))
    parts = ["\n".join(dict.fromkeys(imports)) + "\n"]
    if rng.random() < 0.3:
        parts.append("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n")
    models = []
    for n in range(rng.randint(0, 2)):
        name = f"Model{n}"
        models.append(name)
        parts.append(writer.module_class(name))
    for n in range(rng.randint(0, 2)):
        parts.append(writer.helper(f"helper{n}"))
    if models and rng.random() < 0.3:
        parts.append(writer.training(models[0]))
    if rng.random() < 0.3:
        parts.append(f"# {writer.pick(COMMENTS)}\nx = {writer.expression('torch.randn(2, 3)', 'torch.ones(2, 3)', 2)}\n")
    if len(parts) == 1:
        parts.append(f"x = {writer.expression('torch.randn(4, 4)', 'torch.ones(4, 4)', 3)}\n")
    return ("\n\n" if rng.random() < 0.7 else "\n").join(parts)


def plain_program(rng: random.Random, spaces_in_footer: bool = True) -> str:
    """Python that mentions no torch name, with layout a converter must keep byte for byte.
    ``spaces_in_footer=False``: the blank lines after the last statement hold no spaces or tabs (LibCST loses
    some of those after a converted file's last statement, see LIBCST_FOOTER_BUG)."""
    lines = []
    for n in range(rng.randint(1, 12)):
        kind = rng.randrange(8)
        if kind == 0:
            lines.append(f"x{n} = {rng.randint(0, 99)}")
        elif kind == 1:
            lines.append(rng.choice(["", "  ", "\t", "    "]))  # blank lines, some with spaces
        elif kind == 2:
            lines.append(f"# comment {n}{rng.choice(['', '   ', ' # nested'])}")
        elif kind == 3:
            lines.append(f"def f{n}(a, b=({n}, 'torchlike')):\n{rng.choice(['    ', chr(9)])}return a  # keep")
        elif kind == 4:
            lines.append(f"import {rng.choice(['os', 'math', 'json as js', 'numpy as np'])}")
        elif kind == 5:
            lines.append(f"s{n} = '''text\n  with torch in a string\n'''")
        elif kind == 6:
            lines.append(f"class C{n}:\n    value = [1,2 ,  3]  ;  other = {{'a':1}}")
        else:
            lines.append(f"y{n} = (1 +\n      2)")
    ending = rng.choice(["\n", "\r\n"])
    text = ending.join(lines) + rng.choice(["", ending, ending * 2, ending + "  " + ending])
    if not spaces_in_footer:
        lines = text.split(ending)
        footer = len(lines)
        while footer > 0 and (not lines[footer - 1].strip() or lines[footer - 1].lstrip().startswith("#")):
            footer -= 1
        text = ending.join(lines[:footer] + [line if line.strip() else "" for line in lines[footer:]])
    return text


# Converter bugs the generated programs find, each as (minimal example, what goes wrong, templates to leave out):
# benchmarks/idempotence_sweep.py --skip-known leaves their templates out. None known today; the ones found so far
# are regression tests in test_idempotence.py (ONCE_BUGS).
KNOWN_CONVERTER_BUGS: dict = {}
# LibCST itself (1.9) drops a blank line holding spaces or tabs when it follows another blank line after the last
# statement: parse_module("x = 1\n\n  \n").code == "x = 1\n  \n". A file no rule changes is given back as read.
LIBCST_FOOTER_BUG = "x = 1\n\n  \n"


def known_bug_templates() -> frozenset:
    return frozenset(t for _, _, templates in KNOWN_CONVERTER_BUGS.values() for t in templates)
