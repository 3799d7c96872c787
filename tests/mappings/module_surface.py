"""torch's Module / container / Parameter / nn.init surface, as model code writes it, converted and run on both frameworks.

The forms are generated, not listed per case: every ``torch.nn.init`` function (enumerated from the installed torch)
x its argument variants x every receiver form model code writes (``layer.weight``, ``layer.weight.data``, a Parameter
attribute and its ``.data``, a slice of a weight, a Conv1d/Conv2d weight, a bias, a tensor initialised and then
wrapped in ``nn.Parameter``) x every place it is written (``__init__``, ``_init_weights(self, m)`` applied with
``self.apply``, a module-level function given to ``self.apply``, a loop over ``self.modules()`` with isinstance
narrowing, loops over ``named_parameters()`` / ``parameters()`` by name or rank); the Parameter forms (``.data`` reads
and writes, ``.data.<method>_()``, ``.data[...] =``, ``detach``/``clone``, ``requires_grad``); nn.Module's members
model code uses (enumerated from torch: ``MODULE_MEMBERS``); and the containers' members (Sequential, ModuleList,
ModuleDict, ParameterList, ParameterDict: indexing, negative indices, slices, len, iteration, append/extend/insert/
pop, keys/items/values/update/``in``).

Every form is one small ``nn.Module`` class; a family's classes are one source file, converted once by
``mindport.convert_source``. torch decides what exists: a form torch itself rejects is not a case. Each class is
built on both frameworks and run on the same input:

* ``values`` forms: the torch weights are moved with ``mindport.transfer_weights`` (strict), outputs compared;
* ``det`` forms (deterministic inits: constant_, zeros_, ones_, eye_, dirac_, copy_, fill_ ...): no transfer, the
  values the init wrote are compared with torch's;
* ``random`` forms (random inits): no transfer, each returned tensor is compared by shape, dtype and statistics
  (mean, std, min/max for bounded draws, zero fraction, orthogonality) against torch's draw.

A form ends ``pass``, ``loud`` (the conversion flags the line: torch's meaning kept, reason given), ``crash``
(no diagnostic, but building or running raises) or ``silent`` (runs and differs).

``python -m tests.mappings.module_surface [family...] [--json FILE]`` prints the table per family and every
non-passing form.
"""
from __future__ import annotations

import math
import sys
import textwrap
from dataclasses import dataclass, field

import numpy as np

# ------------------------------------------------------------------------------------------------------------ forms


@dataclass
class Form:
    family: str
    id: str
    body: str  # the class's text, its name written {C}
    mode: str = "values"  # values | det | random
    input: tuple = (2, 8)  # one float32 input of this shape (() for none)
    prelude: str = ""  # module-level text before the class ({C} replaced)

    def text(self, cls: str) -> str:
        pre = textwrap.dedent(self.prelude).replace("{C}", cls).strip()
        body = textwrap.dedent(self.body).replace("{C}", cls).strip()
        return (pre + "\n\n\n" if pre else "") + body + "\n"


FORMS: list[Form] = []


def fill(template: str, **subs: str) -> str:
    """The template dedented; a line that is only ``@KEY@`` becomes subs[KEY]'s lines at that line's indentation,
    an ``@KEY@`` inside a line its (one-line) value."""
    out = []
    for line in textwrap.dedent(template).strip("\n").splitlines():
        key = line.strip()
        if key.startswith("@") and key.endswith("@") and key[1:-1] in subs:
            pad = line[: len(line) - len(line.lstrip())]
            value = textwrap.dedent(subs[key[1:-1]]).strip("\n")
            out.extend(pad + v if v.strip() else "" for v in value.splitlines())
            continue
        for k, v in subs.items():
            line = line.replace(f"@{k}@", v)
        out.append(line)
    return "\n".join(out) + "\n"


def add(family, id, body, mode="values", input=(2, 8), prelude=""):  # noqa: A002
    FORMS.append(Form(family, id, body, mode, tuple(input), prelude))


# ---------------------------------------------------------------------------------------------- nn.init x receivers

# every nn.init function torch has (enumerated: the test checks this against dir(torch.nn.init)), with the argument
# variants model code writes; det = deterministic (values compared), else random (statistics compared)
INIT_CALLS = {
    "constant_": (["{w}, 0.3", "{w}, val=-1.5"], "det"),
    "zeros_": (["{w}"], "det"),
    "ones_": (["{w}"], "det"),
    "eye_": (["{w}"], "det"),
    "dirac_": (["{w}", "{w}, groups=2"], "det"),
    "uniform_": (["{w}, -0.5, 0.5", "{w}, a=0.2, b=0.7"], "random"),
    "normal_": (["{w}, mean=0.5, std=2.0", "{w}, 0.0, 0.02"], "random"),
    "trunc_normal_": (["{w}, std=0.02", "{w}, mean=0.2, std=1.0, a=-0.5, b=1.0"], "random"),
    "xavier_uniform_": (["{w}", "{w}, gain=nn.init.calculate_gain('relu')"], "random"),
    "xavier_normal_": (["{w}", "{w}, gain=2.0"], "random"),
    "kaiming_uniform_": (["{w}, a=math.sqrt(5)", "{w}, mode='fan_out', nonlinearity='relu'"], "random"),
    "kaiming_normal_": (["{w}", "{w}, mode='fan_out', nonlinearity='relu'", "{w}, a=0.1, nonlinearity='leaky_relu'"],
                        "random"),
    "orthogonal_": (["{w}", "{w}, gain=2.0"], "random"),
    "sparse_": (["{w}, sparsity=0.5, std=0.01"], "random"),
}

# receivers in __init__: (id, setup lines, the receiver expression, what forward returns)
INIT_RECEIVERS = [
    ("linear.weight", "self.fc = nn.Linear(48, 256)", "self.fc.weight", "self.fc.weight"),
    ("linear.weight.data", "self.fc = nn.Linear(48, 256)", "self.fc.weight.data", "self.fc.weight"),
    ("linear.bias", "self.fc = nn.Linear(48, 256)", "self.fc.bias", "self.fc.bias"),
    ("linear.bias.data", "self.fc = nn.Linear(48, 256)", "self.fc.bias.data", "self.fc.bias"),
    ("param", "self.w = nn.Parameter(torch.empty(256, 48))", "self.w", "self.w"),
    ("param.data", "self.w = nn.Parameter(torch.zeros(256, 48))", "self.w.data", "self.w"),
    ("weight.data[:128]", "self.fc = nn.Linear(48, 256)", "self.fc.weight.data[:128]", "self.fc.weight[:128]"),
    ("weight[128:]", "self.fc = nn.Linear(48, 256)", "self.fc.weight[128:]", "self.fc.weight[128:]"),
    ("conv2d.weight", "self.conv = nn.Conv2d(16, 32, 3)", "self.conv.weight", "self.conv.weight"),
    # a Conv1d weight is 4-D in MindSpore ((out, in, 1, k)): its values are compared in torch's element order
    ("conv1d.weight.data", "self.conv = nn.Conv1d(16, 32, 5)", "self.conv.weight.data",
     "self.conv.weight.reshape(32, -1)"),
    ("embedding.weight", "self.emb = nn.Embedding(300, 32)", "self.emb.weight", "self.emb.weight"),
]


def _init_forms():
    net = "self.fc1 = nn.Linear(48, 256)\nself.fc2 = nn.Linear(256, 64)\nself.norm = nn.LayerNorm(64)"
    # what forward returns: every tensor the form initialises (the rest keeps torch's default random draw)
    ret = "self.fc1.weight, self.fc2.weight, self.fc1.bias, self.norm.weight, self.norm.bias"
    ret_bias = "self.fc1.bias, self.fc2.bias, self.norm.weight, self.norm.bias"
    for fn, (variants, mode) in INIT_CALLS.items():
        for vi, args in enumerate(variants):
            def call(w, args=args, fn=fn):
                return f"nn.init.{fn}({args.format(w=w)})"
            for rid, setup, recv, out in INIT_RECEIVERS:
                add("init_direct", f"{fn}#{vi}({rid})", fill("""
                    class {C}(nn.Module):
                        def __init__(self):
                            super().__init__()
                            @SETUP@
                            @CALL@

                        def forward(self, x):
                            return @RET@
                    """, SETUP=setup, CALL=call(recv), RET=out), mode, ())
            # a tensor initialised, then wrapped in a Parameter
            add("init_direct", f"{fn}#{vi}(tensor->Parameter)", fill("""
                class {C}(nn.Module):
                    def __init__(self):
                        super().__init__()
                        w = torch.empty(256, 48)
                        @CALL@
                        self.w = nn.Parameter(w)

                    def forward(self, x):
                        return self.w
                """, CALL=call("w")), mode, ())
            # the places an init is written, on the layers a model holds
            for recv in ("m.weight", "m.weight.data", "m.bias"):
                ctx = recv[2:]
                zero_bias = "" if recv == "m.bias" else "if m.bias is not None:\n    nn.init.zeros_(m.bias)"
                add("init_apply", f"{fn}#{vi}({ctx}) in _init_weights", fill("""
                    class {C}(nn.Module):
                        def __init__(self):
                            super().__init__()
                            @NET@
                            self.apply(self._init_weights)

                        def _init_weights(self, m):
                            if isinstance(m, nn.Linear):
                                @CALL@
                                @ZERO@
                            elif isinstance(m, nn.LayerNorm):
                                nn.init.ones_(m.weight)
                                nn.init.zeros_(m.bias)

                        def forward(self, x):
                            return @RET@
                    """, NET=net, CALL=call(recv), ZERO=zero_bias, RET=ret_bias if recv == "m.bias" else ret), mode, ())
                add("init_modules", f"{fn}#{vi}({ctx}) over self.modules()", fill("""
                    class {C}(nn.Module):
                        def __init__(self):
                            super().__init__()
                            @NET@
                            for m in self.modules():
                                if isinstance(m, nn.Linear):
                                    @CALL@
                                    @ZERO@
                                elif isinstance(m, (nn.LayerNorm, nn.BatchNorm1d)):
                                    m.weight.data.fill_(1.0)
                                    m.bias.data.zero_()

                        def forward(self, x):
                            return @RET@
                    """, NET=net, CALL=call(recv), ZERO=zero_bias.replace("nn.init.zeros_(m.bias)", "m.bias.data.zero_()"),
                    RET=ret_bias if recv == "m.bias" else ret), mode, ())
            add("init_apply", f"{fn}#{vi}(weight) in a function given to apply", fill("""
                class {C}(nn.Module):
                    def __init__(self):
                        super().__init__()
                        @NET@
                        self.apply(init_{C})

                    def forward(self, x):
                        return @RET@
                """, NET=net, RET=ret), mode, (), prelude=fill("""
                def init_{C}(m):
                    if type(m) == nn.Linear:
                        @CALL@
                        m.bias.data.fill_(0.01)
                """, CALL=call("m.weight")))
            add("init_modules", f"{fn}#{vi}(p) over named_parameters by name", fill("""
                class {C}(nn.Module):
                    def __init__(self):
                        super().__init__()
                        @NET@
                        for name, p in self.named_parameters():
                            if 'weight' in name and p.dim() > 1:
                                @CALL@
                            elif 'bias' in name:
                                nn.init.constant_(p, 0.1)

                    def forward(self, x):
                        return @RET@
                """, NET=net, CALL=call("p"), RET=ret), mode, ())
            add("init_modules", f"{fn}#{vi}(p) over parameters() by rank", fill("""
                class {C}(nn.Module):
                    def __init__(self):
                        super().__init__()
                        @NET@
                        for p in self.parameters():
                            if p.dim() > 1:
                                @CALL@

                    def forward(self, x):
                        return self.fc1.weight, self.fc2.weight
                """, NET=net, CALL=call("p")), mode, ())


# the layers model code initialises by hand, each receiver under torch's member name (a BatchNorm's weight is
# MindSpore's gamma, an Embedding's its embedding_table, an LSTM's per-layer tensors the runtime layer's): in
# __init__, in isinstance loops over self.modules() (tuples of classes, bias=None layers), by name over an RNN's
# named_parameters (the forget-gate bias), and the VGG/ResNet init that reads the layer's settings
LAYER_INITS = [
    ("BatchNorm2d constant_ 1/0", "self.bn = nn.BatchNorm2d(8)\nnn.init.constant_(self.bn.weight, 0.5)\n"
     "nn.init.constant_(self.bn.bias, 0.25)", "self.bn.weight, self.bn.bias", "det"),
    ("BatchNorm2d .data.fill_/zero_", "self.bn = nn.BatchNorm2d(8)\nself.bn.weight.data.fill_(0.5)\n"
     "self.bn.bias.data.zero_()", "self.bn.weight, self.bn.bias", "det"),
    ("BatchNorm1d running stats", "self.bn = nn.BatchNorm1d(8)\nself.bn.running_mean.fill_(0.5)\n"
     "self.bn.running_var.fill_(2.0)", "self.bn.running_mean, self.bn.running_var", "det"),
    ("GroupNorm ones_/zeros_", "self.gn = nn.GroupNorm(2, 8)\nnn.init.ones_(self.gn.weight)\n"
     "nn.init.zeros_(self.gn.bias)", "self.gn.weight, self.gn.bias", "det"),
    ("LayerNorm constant_", "self.ln = nn.LayerNorm(8)\nnn.init.constant_(self.ln.weight, 2.0)\n"
     "nn.init.constant_(self.ln.bias, -1.0)", "self.ln.weight, self.ln.bias", "det"),
    ("Embedding normal_ + padding row", "self.emb = nn.Embedding(300, 32, padding_idx=0)\n"
     "nn.init.normal_(self.emb.weight, mean=0.0, std=0.5)\nself.emb.weight.data[0].zero_()",
     "self.emb.weight", "random"),
    ("Embedding .data.uniform_(-r, r)", "self.emb = nn.Embedding(300, 32)\ninitrange = 0.1\n"
     "self.emb.weight.data.uniform_(-initrange, initrange)", "self.emb.weight", "random"),
    ("Embedding padding row zero_ (det)", "self.emb = nn.Embedding(10, 4, padding_idx=2)\n"
     "nn.init.constant_(self.emb.weight, 0.5)\nwith torch.no_grad():\n    self.emb.weight[2].fill_(0)",
     "self.emb.weight", "det"),
    ("Conv1d kaiming_normal_", "self.conv = nn.Conv1d(16, 32, 5)\n"
     "nn.init.kaiming_normal_(self.conv.weight, mode='fan_out', nonlinearity='relu')",
     "self.conv.weight.reshape(32, -1)", "random"),
    ("ConvTranspose2d xavier_uniform_", "self.up = nn.ConvTranspose2d(16, 8, 4, stride=2)\n"
     "nn.init.xavier_uniform_(self.up.weight)", "self.up.weight", "random"),
    ("ConvTranspose2d constant_", "self.up = nn.ConvTranspose2d(4, 2, 2, stride=2)\n"
     "nn.init.constant_(self.up.weight, 0.25)\nnn.init.zeros_(self.up.bias)", "self.up.weight, self.up.bias", "det"),
    ("Conv2d weight.data.normal_(0, sqrt(2/n)) from kernel_size", "self.conv = nn.Conv2d(16, 32, 3)\n"
     "n = self.conv.kernel_size[0] * self.conv.kernel_size[1] * self.conv.out_channels\n"
     "self.conv.weight.data.normal_(0, math.sqrt(2.0 / n))", "self.conv.weight", "random"),
    ("Linear normal_(std=1/sqrt(in_features))", "self.fc = nn.Linear(48, 256)\n"
     "nn.init.normal_(self.fc.weight, std=1.0 / math.sqrt(self.fc.in_features))", "self.fc.weight", "random"),
    ("Linear uniform_(-1/sqrt(weight.size(1)))", "self.fc = nn.Linear(48, 256)\n"
     "stdv = 1.0 / math.sqrt(self.fc.weight.size(1))\nself.fc.weight.data.uniform_(-stdv, stdv)",
     "self.fc.weight", "random"),
    ("PReLU constant_", "self.act = nn.PReLU(8)\nnn.init.constant_(self.act.weight, 0.1)", "self.act.weight", "det"),
    ("MultiheadAttention in_proj xavier + zero bias", "self.attn = nn.MultiheadAttention(32, 4)\n"
     "nn.init.xavier_uniform_(self.attn.in_proj_weight)\nnn.init.constant_(self.attn.in_proj_bias, 0.0)\n"
     "nn.init.constant_(self.attn.out_proj.bias, 0.0)",
     "self.attn.in_proj_weight, self.attn.in_proj_bias, self.attn.out_proj.bias", "random"),
    ("LSTM named_parameters by name + forget-gate bias", "self.rnn = nn.LSTM(8, 16, num_layers=2)\n"
     "for name, param in self.rnn.named_parameters():\n    if 'weight_ih' in name:\n"
     "        nn.init.constant_(param, 0.1)\n    elif 'weight_hh' in name:\n        nn.init.constant_(param, -0.1)\n"
     "    elif 'bias' in name:\n        param.data.fill_(0)\n        param.data[16:32].fill_(1.0)",
     "self.rnn(x.reshape(1, 2, 8))[0]", "det"),
    ("LSTM weight_hh_l0 orthogonal_", "self.rnn = nn.LSTM(8, 16)\nnn.init.orthogonal_(self.rnn.weight_hh_l0)",
     "self.rnn.weight_hh_l0", "random"),
    ("GRU bias_ih_l0.data.zero_ + weight constant_", "self.rnn = nn.GRU(8, 16, batch_first=True)\n"
     "nn.init.constant_(self.rnn.weight_ih_l0, 0.05)\nnn.init.constant_(self.rnn.weight_hh_l0, 0.02)\n"
     "self.rnn.bias_ih_l0.data.zero_()\nself.rnn.bias_hh_l0.data.fill_(0.1)", "self.rnn(x.reshape(2, 1, 8))[0]",
     "det"),
]

LAYER_LOOPS = [
    ("ResNet _initialize_weights", """
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.constant_(m.weight, 0.05)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.weight, 0.01)
                nn.init.constant_(m.bias, 0)
        """),
    ("VGG .data loop", """
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                m.weight.data.fill_(0.05)
                if m.bias is not None:
                    m.bias.data.zero_()
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.data.fill_(1)
                m.bias.data.zero_()
            elif isinstance(m, nn.Linear):
                m.weight.data.fill_(0.01)
                m.bias.data.zero_()
        """),
    ("zero-init last BN gamma", """
        for m in self.modules():
            if isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        nn.init.zeros_(self.bn2.weight)
        nn.init.constant_(self.conv1.weight, 0.05)
        nn.init.constant_(self.conv2.weight, -0.02)
        nn.init.constant_(self.head.weight, 0.01)
        nn.init.zeros_(self.head.bias)
        """),
    ("classname.find loop (apply)", """
        self.apply(self._weights_init)
        """),
]


def _layer_init_forms():
    fam = "init_layers"
    for id_, init, ret, mode in LAYER_INITS:
        add(fam, id_, fill("""
            class {C}(nn.Module):
                def __init__(self):
                    super().__init__()
                    @INIT@

                def forward(self, x):
                    return @RET@
            """, INIT=init, RET=ret), mode, (2, 8))
    net = ("self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)\nself.bn1 = nn.BatchNorm2d(8)\n"
           "self.conv2 = nn.Conv2d(8, 8, 3, padding=1)\nself.bn2 = nn.GroupNorm(2, 8) if False else nn.BatchNorm2d(8)\n"
           "self.gn = nn.GroupNorm(2, 8)\nself.head = nn.Linear(8, 4)")
    for id_, loop in LAYER_LOOPS:
        add(fam, id_, fill("""
            class {C}(nn.Module):
                def __init__(self):
                    super().__init__()
                    @NET@
                    @LOOP@

                def _weights_init(self, m):
                    classname = m.__class__.__name__
                    if classname.find('Conv') != -1:
                        m.weight.data.fill_(0.05)
                        if m.bias is not None:
                            m.bias.data.zero_()
                    elif classname.find('Linear') != -1:
                        m.weight.data.fill_(0.01)
                        m.bias.data.fill_(0.5)
                    elif classname.find('BatchNorm') != -1:
                        m.weight.data.fill_(1.0)
                        m.bias.data.fill_(0)

                def forward(self, x):
                    y = self.bn1(self.conv1(x))
                    y = self.gn(self.bn2(self.conv2(torch.relu(y))))
                    return self.head(y.mean((2, 3))), self.bn2.weight, self.gn.weight
            """, NET=net, LOOP=loop), "det", (2, 3, 6, 6))


# ------------------------------------------------------------------------------------------------- Parameter forms

def _parameter_forms():
    fam = "parameter"

    def p(id, init, ret, mode="det", input=(2, 8)):  # noqa: A002
        add(fam, id, fill("""
            class {C}(nn.Module):
                def __init__(self):
                    super().__init__()
                    @INIT@

                def forward(self, x):
                    return @RET@
            """, INIT=init, RET=ret), mode, input)

    p("Parameter(torch.zeros)", "self.w = nn.Parameter(torch.zeros(4, 8))", "self.w, x @ self.w.t()")
    p("Parameter(torch.ones * 0.5)", "self.w = nn.Parameter(torch.ones(8) * 0.5)", "self.w * x")
    p("Parameter(torch.randn * 0.02)", "self.w = nn.Parameter(torch.randn(64, 48) * 0.02)", "self.w", "random")
    p("Parameter(torch.rand)", "self.w = nn.Parameter(torch.rand(64, 48))", "self.w", "random")
    p("Parameter(requires_grad=False)", "self.w = nn.Parameter(torch.ones(8), requires_grad=False)",
      "self.w.requires_grad, self.w + x")
    p("Parameter(torch.tensor(float))", "self.alpha = nn.Parameter(torch.tensor(0.5))", "self.alpha * x")
    p("Parameter(torch.tensor([list]))", "self.alpha = nn.Parameter(torch.tensor([0.5, 2.0]))", "self.alpha")
    p("Parameter(torch.Tensor(n).fill_)", "self.w = nn.Parameter(torch.Tensor(8).fill_(0.25))", "self.w * x")
    p("Parameter(torch.FloatTensor(n, m))+init", "self.w = nn.Parameter(torch.FloatTensor(4, 8))\n"
      "nn.init.constant_(self.w, 0.1)", "self.w")
    p("Parameter(torch.empty).data.fill_", "self.w = nn.Parameter(torch.empty(8))\nself.w.data.fill_(0.7)", "self.w")
    p("requires_grad default", "self.w = nn.Parameter(torch.ones(8))", "self.w.requires_grad")
    p(".data read in forward", "self.w = nn.Parameter(torch.full((8,), 2.0))", "self.w.data * x")
    p(".data = tensor", "self.w = nn.Parameter(torch.zeros(8))\nself.w.data = torch.full((8,), 3.0)", "self.w")
    p(".weight.data = expr", "self.fc = nn.Linear(8, 4)\nself.fc.weight.data = torch.ones(4, 8) * 0.5",
      "self.fc.weight")
    p(".data.copy_", "self.w = nn.Parameter(torch.zeros(8))\nself.w.data.copy_(torch.arange(8.0))", "self.w")
    p(".weight.data.copy_(from_numpy)", "self.fc = nn.Linear(4, 2)\n"
      "self.fc.weight.data.copy_(torch.from_numpy(np.arange(8.0).reshape(2, 4)))", "self.fc.weight")
    p(".data.fill_", "self.fc = nn.Linear(8, 4)\nself.fc.bias.data.fill_(0.3)", "self.fc.bias")
    p(".data.zero_", "self.fc = nn.Linear(8, 4)\nself.fc.bias.data.zero_()", "self.fc.bias")
    p(".data.normal_", "self.fc = nn.Linear(48, 64)\nself.fc.weight.data.normal_(0, 0.02)", "self.fc.weight",
      "random")
    p(".data.normal_(mean=, std=)", "self.fc = nn.Linear(48, 64)\nself.fc.weight.data.normal_(mean=1.0, std=0.5)",
      "self.fc.weight", "random")
    p(".data.uniform_", "self.fc = nn.Linear(48, 64)\nself.fc.weight.data.uniform_(-0.1, 0.1)", "self.fc.weight",
      "random")
    p(".data.uniform_ on a Parameter", "self.w = nn.Parameter(torch.empty(64, 48))\nself.w.data.uniform_(0.0, 2.0)",
      "self.w", "random")
    p(".data.mul_", "self.fc = nn.Linear(8, 4)\nself.fc.weight.data.fill_(2.0)\nself.fc.weight.data.mul_(0.5)",
      "self.fc.weight")
    p(".data.add_", "self.w = nn.Parameter(torch.ones(8))\nself.w.data.add_(1.5)", "self.w")
    p(".data.clamp_", "self.w = nn.Parameter(torch.arange(8.0))\nself.w.data.clamp_(1.0, 5.0)", "self.w")
    p(".data.div_", "self.w = nn.Parameter(torch.arange(8.0))\nself.w.data.div_(4.0)", "self.w")
    p(".data[0] =", "self.w = nn.Parameter(torch.zeros(8))\nself.w.data[0] = 5.0", "self.w")
    p(".data[:, 1] =", "self.w = nn.Parameter(torch.zeros(4, 8))\nself.w.data[:, 1] = 1.0", "self.w")
    p(".data[...] =", "self.w = nn.Parameter(torch.zeros(4, 8))\nself.w.data[...] = torch.ones(4, 8) * 2",
      "self.w")
    p(".weight.data[:2] =", "self.fc = nn.Linear(8, 4)\nself.fc.weight.data[:2] = 0.0\n"
      "self.fc.weight.data[2:] = 1.0", "self.fc.weight")
    p(".bias.data[mask-free slice].fill_", "self.fc = nn.Linear(8, 4)\nself.fc.bias.data.zero_()\n"
      "self.fc.bias.data[1:3].fill_(1.0)", "self.fc.bias")
    p("no_grad: param.copy_", "self.w = nn.Parameter(torch.zeros(8))\nwith torch.no_grad():\n"
      "    self.w.copy_(torch.arange(8.0))", "self.w")
    p("no_grad: weight.fill_", "self.fc = nn.Linear(8, 4)\nwith torch.no_grad():\n    self.fc.weight.fill_(0.1)\n"
      "    self.fc.bias.zero_()", "self.fc.weight, self.fc.bias")
    p("no_grad: weight[:] = ", "self.fc = nn.Linear(8, 4)\nwith torch.no_grad():\n    self.fc.weight[:] = 0.5",
      "self.fc.weight")
    p("no_grad: weight.mul_", "self.fc = nn.Linear(8, 4)\nnn.init.ones_(self.fc.weight)\nwith torch.no_grad():\n"
      "    self.fc.weight.mul_(0.1)", "self.fc.weight")
    p("weight = nn.Parameter(...)", "self.fc = nn.Linear(8, 4)\nself.fc.weight = nn.Parameter(torch.ones(4, 8))",
      "self.fc.weight, self.fc(x)", "values")
    p("tied weight", "self.emb = nn.Embedding(10, 8)\nnn.init.constant_(self.emb.weight, 0.2)\n"
      "self.head = nn.Linear(8, 10, bias=False)\nself.head.weight = self.emb.weight", "self.head(x)")
    p("detach() in forward", "self.w = nn.Parameter(torch.full((8,), 2.0))", "self.w.detach() * x")
    p("clone() in forward", "self.w = nn.Parameter(torch.full((8,), 2.0))", "self.w.clone() + x")
    p("detach().clone()", "self.w = nn.Parameter(torch.arange(8.0))", "self.w.detach().clone()")
    p("shape / size / numel / dim", "self.w = nn.Parameter(torch.zeros(4, 8))",
      "tuple(self.w.shape), self.w.size(0), self.w.size(-1), self.w.numel(), self.w.dim(), self.w.ndim")
    p("dtype", "self.w = nn.Parameter(torch.zeros(4, 8))", "self.w.dtype == torch.float32")
    p("requires_grad_(False)", "self.w = nn.Parameter(torch.ones(8))\nself.w.requires_grad_(False)",
      "self.w.requires_grad")
    p("requires_grad = False", "self.fc = nn.Linear(8, 4)\nself.fc.weight.requires_grad = False",
      "self.fc.weight.requires_grad, self.fc.bias.requires_grad")
    p("for p in parameters(): requires_grad = False", "self.fc = nn.Linear(8, 4)\nself.fc2 = nn.Linear(4, 2)\n"
      "for p in self.fc.parameters():\n    p.requires_grad = False",
      "[p.requires_grad for p in self.parameters()]")
    p("numel sum", "self.fc = nn.Linear(8, 4)\nself.fc2 = nn.Linear(4, 2, bias=False)",
      "sum(p.numel() for p in self.parameters())")
    p("numel sum if requires_grad", "self.fc = nn.Linear(8, 4)\nself.fc2 = nn.Linear(4, 2)\n"
      "self.fc2.weight.requires_grad = False", "sum(p.numel() for p in self.parameters() if p.requires_grad)")
    p("Parameter used as a tensor", "self.scale = nn.Parameter(torch.ones(1) * 3.0)",
      "x * self.scale, self.scale.item()")
    p("Parameter.exp()", "self.log_s = nn.Parameter(torch.zeros(8) + 0.5)", "self.log_s.exp() * x")
    p("Parameter[None, :]", "self.pos = nn.Parameter(torch.arange(8.0))", "x + self.pos[None, :]")
    p("Parameter.unsqueeze", "self.pos = nn.Parameter(torch.arange(8.0))", "x + self.pos.unsqueeze(0)")
    p("zeros then trunc_normal_ (ViT cls token)", "self.cls = nn.Parameter(torch.zeros(1, 1, 64))\n"
      "nn.init.trunc_normal_(self.cls, std=0.02)", "self.cls", "random")
    p("zeros then normal_ (pos embed)", "self.pos = nn.Parameter(torch.zeros(1, 64, 48))\n"
      "self.pos.data.normal_(std=0.02)", "self.pos", "random")
    p("Parameter from_numpy", "self.w = nn.Parameter(torch.from_numpy(np.arange(8, dtype=np.float32)))",
      "self.w * x")


# ------------------------------------------------------------------------------------------------ nn.Module members

def _module_forms():
    fam = "module"
    blk = """
        class {C}Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 8)
                self.norm = nn.LayerNorm(8)
                self.register_buffer('scale', torch.full((8,), 2.0))

            def forward(self, x):
                return self.norm(self.fc(x)) * self.scale
        """

    def m(id, init, ret, mode="values", extra="", prelude=blk):  # noqa: A002
        add(fam, id, fill("""
            class {C}(nn.Module):
                def __init__(self):
                    super().__init__()
                    @INIT@

                @EXTRA@

                def forward(self, x):
                    return @RET@
            """, INIT=init, EXTRA=extra, RET=ret), mode, (2, 8), prelude)

    two = "self.block = {C}Block()\nself.head = nn.Linear(8, 4)\nself.drop = nn.Dropout(0.1)"
    m("forward through a block", two, "self.head(self.block(x))")
    m("modules() count", two, "len(list(self.modules()))")
    m("modules() isinstance Linear count", two, "sum(1 for m in self.modules() if isinstance(m, nn.Linear))")
    m("type(m).__name__ over modules()", two, "[type(m).__name__ for m in self.modules()]")
    m("m.__class__.__name__", two, "self.head.__class__.__name__, self.block.__class__.__name__")
    m("class name test", two, "[n for n, m in self.named_modules() if m.__class__.__name__ == 'Linear']")
    m("named_modules names", two, "[n for n, _ in self.named_modules()]")
    m("named_modules(prefix=)", two, "[n for n, _ in self.named_modules(prefix='net')]")
    m("children()", two, "len(list(self.children())), [type(c).__name__ for c in self.children()]")
    m("named_children", two, "[n for n, _ in self.named_children()]")
    m("parameters() count", two, "len(list(self.parameters()))")
    m("parameters(recurse=False)", two + "\nself.w = nn.Parameter(torch.ones(8))",
      "len(list(self.parameters(recurse=False)))")
    m("named_parameters names", two, "[n for n, _ in self.named_parameters()]")
    m("named_parameters shapes", two, "[tuple(p.shape) for _, p in self.named_parameters()]")
    m("named_parameters(prefix=)", two, "[n for n, _ in self.named_parameters(prefix='model')]")
    m("named_parameters(recurse=False)", two + "\nself.w = nn.Parameter(torch.ones(8))",
      "[n for n, _ in self.named_parameters(recurse=False)]")
    m("'bias' in name over named_parameters", two,
      "[n for n, p in self.named_parameters() if 'bias' in n], [n for n, p in self.named_parameters() if "
      "n.endswith('weight')]")
    m("named_parameters no_decay split", two,
      "[n for n, p in self.named_parameters() if not any(nd in n for nd in ['bias', 'norm.weight'])]")
    m("buffers() count", two, "len(list(self.buffers()))")
    m("named_buffers names", two, "[n for n, _ in self.named_buffers()]")
    m("named_buffers values", two, "[b for _, b in self.named_buffers()]")
    m("register_buffer persistent=False", "self.register_buffer('a', torch.ones(8))\n"
      "self.register_buffer('b', torch.full((8,), 3.0), persistent=False)",
      "x * self.a + self.b, list(self.state_dict().keys())")
    m("register_buffer persistent=False named_buffers", "self.register_buffer('a', torch.ones(8))\n"
      "self.register_buffer('b', torch.full((8,), 3.0), persistent=False)", "[n for n, _ in self.named_buffers()]")
    m("register_buffer None", "self.register_buffer('mask', None)", "self.mask is None, x")
    m("register_buffer maybe None", "use_mask = False\nmask = torch.ones(8) if use_mask else None\n"
      "self.register_buffer('mask', mask)", "x if self.mask is None else x * self.mask")
    m("register_buffer then assign", "self.register_buffer('steps', torch.zeros(1))\nself.steps = torch.ones(1) * 4",
      "self.steps * x")
    m("register_buffer int", "self.register_buffer('idx', torch.arange(8))", "x[:, self.idx], self.idx.dtype == "
      "torch.int64")
    m("buffer in state_dict", "self.fc = nn.Linear(8, 4)\nself.register_buffer('pos', torch.arange(4.0))",
      "sorted(self.state_dict().keys())")
    m("register_parameter", "self.register_parameter('alpha', nn.Parameter(torch.full((8,), 0.5)))",
      "self.alpha * x")
    m("register_parameter None", "self.register_parameter('bias', None)", "self.bias is None, x")
    m("add_module", "self.add_module('fc', nn.Linear(8, 4))", "self.fc(x)")
    m("add_module in a loop", "for i in range(3):\n    self.add_module(f'layer{i}', nn.Linear(8, 8))",
      "self.layer2(self.layer1(self.layer0(x)))")
    m("setattr/getattr layer{i}", "self.n = 3\nfor i in range(3):\n    setattr(self, f'layer{i}', nn.Linear(8, 8))",
      "self._run(x)", extra="""
        def _run(self, x):
            for i in range(self.n):
                x = getattr(self, f'layer{i}')(x)
            return x
        """)
    m("getattr with default", "self.fc = nn.Linear(8, 4)", "getattr(self, 'missing', None) is None, self.fc(x)")
    m("hasattr", "self.fc = nn.Linear(8, 4)", "hasattr(self, 'fc'), hasattr(self, 'nope'), hasattr(self.fc, 'bias')")
    m("get_submodule", two, "self.get_submodule('block.fc')(x)")
    m("get_parameter", two, "self.get_parameter('block.fc.bias')")
    m("state_dict keys", two, "list(self.state_dict().keys())")
    m("state_dict value", two, "self.state_dict()['block.fc.weight']")
    m("load_state_dict(strict=False) missing", two, "self._load()", extra="""
        def _load(self):
            sd = {k: v for k, v in self.state_dict().items() if not k.startswith('head')}
            result = self.load_state_dict(sd, strict=False)
            return sorted(result.missing_keys), sorted(result.unexpected_keys)
        """)
    m("load_state_dict round trip", two, "self._copy(x)", extra="""
        def _copy(self, x):
            other = {C}Twin()
            other.load_state_dict(self.state_dict())
            return other.head(x)
        """, prelude=blk + """
        class {C}Twin(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = {C}Block()
                self.head = nn.Linear(8, 4)
                self.drop = nn.Dropout(0.1)
        """)
    m("training after eval()", two, "self._modes()", extra="""
        def _modes(self):
            self.eval()
            a = (self.training, self.drop.training)
            self.train()
            b = (self.training, self.drop.training)
            self.train(False)
            return a, b, self.training
        """)
    m("train() returns self", two, "self.train() is self, self.eval() is self")
    m("if self.training branch", two, "self._branch(x)", extra="""
        def _branch(self, x):
            self.eval()
            if self.training:
                return x * 2
            return x + 1
        """)
    m("requires_grad_(False) on a block", two + "\nself.block.requires_grad_(False)",
      "[p.requires_grad for p in self.parameters()]")
    m("zero_grad", two, "self._zg(x)", extra="""
        def _zg(self, x):
            self.zero_grad()
            return self.head(x)
        """)
    m("_modules keys", two, "list(self._modules.keys())")
    m("_modules[name]", two, "self._modules['head'](x)")
    m("_parameters keys", "self.w = nn.Parameter(torch.ones(8))\nself.fc = nn.Linear(8, 8)",
      "list(self._parameters.keys()), list(self.fc._parameters.keys())")
    m("apply(fn) with a counter", two, "self._count()", extra="""
        def _count(self):
            seen = []
            self.apply(lambda m: seen.append(type(m).__name__))
            return len(seen)
        """)
    m("apply returns self", two, "self.apply(lambda m: None) is self")
    m("isinstance(self, nn.Module)", two, "isinstance(self, nn.Module), isinstance(self.head, nn.Module)")
    m("extra_repr / repr", two, "isinstance(repr(self), str)")
    m("Module.float()/to(dtype)", two, "self._cast(x)", extra="""
        def _cast(self, x):
            self.float()
            return self.head(self.block(x))
        """)
    m("child replaced by nn.Identity()", two + "\nself.block.norm = nn.Identity()", "self.head(self.block(x))")
    m("deepcopy clones in a ModuleList", "layer = nn.Linear(8, 8)\nself.layers = nn.ModuleList("
      "[copy.deepcopy(layer) for _ in range(3)])", "self.layers[2](self.layers[0](x)), len(self.layers)")
    m("Sequential(*list(children())[:-1])", two + "\nself.body = nn.Sequential(*list(self.block.children())[:-1])",
      "self.body(x)")
    m("for p in parameters(): p.requires_grad_(False)", two + "\nfor p in self.block.parameters():\n"
      "    p.requires_grad_(False)", "sum(p.numel() for p in self.parameters() if p.requires_grad)")
    m("getattr over a list of names", "self.names = ['q', 'k', 'v']\nfor n in self.names:\n"
      "    setattr(self, n, nn.Linear(8, 4))", "[getattr(self, n)(x) for n in self.names]")
    m("named_modules isinstance weight shapes", two,
      "[(n, tuple(m.weight.shape)) for n, m in self.named_modules() if isinstance(m, nn.Linear)]")
    m("weights of LayerNorm over modules()", two,
      "[m.weight for m in self.modules() if isinstance(m, nn.LayerNorm)]")
    m("next(self.parameters()).dtype", two, "next(self.parameters()).dtype == torch.float32")
    m("device from next(parameters())", two, "x.to(next(self.parameters()).device)")


# ------------------------------------------------------------------------------------------------------- containers

def _container_forms():
    fam = "containers"

    def c(id, init, ret, extra=""):  # noqa: A002
        add(fam, id, fill("""
            class {C}(nn.Module):
                def __init__(self):
                    super().__init__()
                    @INIT@

                @EXTRA@

                def forward(self, x):
                    return @RET@
            """, INIT=init, EXTRA=extra, RET=ret), "values", (2, 8))

    seq = "self.seq = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 6), nn.Tanh(), nn.Linear(6, 4))"
    c("Sequential call", seq, "self.seq(x)")
    c("Sequential[0]", seq, "self.seq[0](x)")
    c("Sequential[-1]", seq, "self.seq[-1](self.seq[2](x))")
    c("Sequential[:2]", seq, "self.seq[:2](x)")
    c("Sequential[:-1]", seq, "self.seq[:-1](x)")
    c("Sequential[1:] type", seq, "type(self.seq[1:]).__name__, len(self.seq[1:])")
    c("len(Sequential)", seq, "len(self.seq)")
    c("iterate Sequential", seq, "self._it(x)", """
        def _it(self, x):
            for layer in self.seq:
                x = layer(x)
            return x
        """)
    c("enumerate Sequential", seq, "self._it(x)", """
        def _it(self, x):
            outs = []
            for i, layer in enumerate(self.seq):
                x = layer(x)
                if i % 2 == 0:
                    outs.append(x)
            return outs
        """)
    c("Sequential(*layers)", "layers = [nn.Linear(8, 8)]\nfor _ in range(2):\n    layers += [nn.ReLU(), "
      "nn.Linear(8, 8)]\nself.seq = nn.Sequential(*layers)", "self.seq(x)")
    c("Sequential(OrderedDict)", "self.seq = nn.Sequential(OrderedDict([('fc1', nn.Linear(8, 6)), "
      "('act', nn.GELU()), ('fc2', nn.Linear(6, 4))]))", "self.seq(x), self.seq.fc2(self.seq.act(self.seq.fc1(x)))")
    c("Sequential.append", "self.seq = nn.Sequential(nn.Linear(8, 6))\nself.seq.append(nn.ReLU())\n"
      "self.seq.append(nn.Linear(6, 4))", "self.seq(x), len(self.seq)")
    c("Sequential.extend", "self.seq = nn.Sequential(nn.Linear(8, 6))\nself.seq.extend([nn.ReLU(), "
      "nn.Linear(6, 4)])", "self.seq(x)")
    c("Sequential.insert", "self.seq = nn.Sequential(nn.Linear(8, 6), nn.Linear(6, 4))\nself.seq.insert(1, "
      "nn.ReLU())", "self.seq(x), len(self.seq)")
    c("Sequential.add_module", "self.seq = nn.Sequential()\nself.seq.add_module('fc', nn.Linear(8, 4))\n"
      "self.seq.add_module('act', nn.ReLU())", "self.seq(x)")
    c("Sequential.pop", seq + "\nself.seq.pop(1)", "self.seq[1](self.seq[0](x)), len(self.seq)")
    c("del Sequential[i]", seq + "\ndel self.seq[1]", "len(self.seq)")
    c("Sequential[i] = layer", seq + "\nself.seq[1] = nn.Sigmoid()", "self.seq(x)")
    c("Sequential(*list(children())[:-1])", seq + "\nself.body = nn.Sequential(*list(self.seq.children())[:-1])",
      "self.body(x)")
    c("Sequential[0].weight.shape", seq, "tuple(self.seq[0].weight.shape), self.seq[2].out_features")
    c("Sequential state_dict keys", seq, "list(self.state_dict().keys())")
    ml = "self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])"
    c("ModuleList iterate", ml, "self._it(x)", """
        def _it(self, x):
            for layer in self.layers:
                x = torch.relu(layer(x))
            return x
        """)
    c("ModuleList[i] in range(len())", ml, "self._it(x)", """
        def _it(self, x):
            for i in range(len(self.layers)):
                x = self.layers[i](x)
            return x
        """)
    c("ModuleList[-1]", ml, "self.layers[-1](x)")
    c("ModuleList[1:] iterate", ml, "self._it(x)", """
        def _it(self, x):
            for layer in self.layers[1:]:
                x = layer(x)
            return x
        """)
    c("ModuleList[::-1]", ml, "self._it(x)", """
        def _it(self, x):
            for layer in self.layers[::-1]:
                x = layer(x) * 0.5
            return x
        """)
    c("ModuleList.append", "self.layers = nn.ModuleList()\nfor i in range(3):\n    self.layers.append("
      "nn.Linear(8, 8))", "self.layers[2](self.layers[0](x)), len(self.layers)")
    c("ModuleList.extend", "self.layers = nn.ModuleList([nn.Linear(8, 8)])\nself.layers.extend([nn.Linear(8, 8), "
      "nn.Linear(8, 4)])", "self.layers[2](self.layers[1](x)), len(self.layers)")
    c("ModuleList.insert", ml + "\nself.layers.insert(0, nn.Linear(8, 8))", "self.layers[0](x), len(self.layers)")
    c("ModuleList += ", ml + "\nself.layers += [nn.Linear(8, 4)]", "self.layers[-1](x), len(self.layers)")
    c("zip(ModuleList, ModuleList)", ml + "\nself.norms = nn.ModuleList([nn.LayerNorm(8) for _ in range(3)])",
      "self._it(x)", """
        def _it(self, x):
            for layer, norm in zip(self.layers, self.norms):
                x = norm(layer(x))
            return x
        """)
    c("enumerate ModuleList", ml, "self._it(x)", """
        def _it(self, x):
            feats = []
            for i, layer in enumerate(self.layers):
                x = layer(x)
                if i != len(self.layers) - 1:
                    feats.append(x)
            return feats
        """)
    c("ModuleList of Sequential", "self.layers = nn.ModuleList([nn.Sequential(nn.Linear(8, 8), nn.ReLU()) "
      "for _ in range(2)])", "self.layers[1](self.layers[0](x)), self.layers[0][0](x)")
    c("ModuleList named_parameters", ml, "[n for n, _ in self.named_parameters()]")
    c("ModuleList state_dict keys", ml, "list(self.state_dict().keys())")
    md = "self.heads = nn.ModuleDict({'a': nn.Linear(8, 4), 'b': nn.Linear(8, 2)})"
    c("ModuleDict[key]", md, "self.heads['a'](x), self.heads['b'](x)")
    c("ModuleDict keys/values/items", md, "list(self.heads.keys()), [m(x) for m in self.heads.values()], "
      "{k: m(x) for k, m in self.heads.items()}")
    c("ModuleDict iterate names", md, "[k for k in self.heads]")
    c("ModuleDict in", md, "'a' in self.heads, 'z' in self.heads")
    c("ModuleDict len", md, "len(self.heads)")
    c("ModuleDict update", md + "\nself.heads.update({'c': nn.Linear(8, 3)})", "self.heads['c'](x), len(self.heads)")
    c("ModuleDict[key] = ", "self.heads = nn.ModuleDict()\nfor name in ['p', 'q']:\n    self.heads[name] = "
      "nn.Linear(8, 3)", "self.heads['q'](x), list(self.heads.keys())")
    c("ModuleDict.pop", md + "\nself.heads.pop('b')", "list(self.heads.keys())")
    c("ModuleDict named_parameters", md, "[n for n, _ in self.named_parameters()]")
    pl = "self.ws = nn.ParameterList([nn.Parameter(torch.full((8,), float(i))) for i in range(3)])"
    c("ParameterList[i]", pl, "x * self.ws[1], self.ws[-1]")
    c("ParameterList iterate", pl, "self._it(x)", """
        def _it(self, x):
            for w in self.ws:
                x = x + w
            return x
        """)
    c("ParameterList len", pl, "len(self.ws)")
    c("ParameterList.append", pl + "\nself.ws.append(nn.Parameter(torch.ones(8) * 7))", "self.ws[3], len(self.ws)")
    c("ParameterList named_parameters", pl, "[n for n, _ in self.named_parameters()]")
    pd = "self.ps = nn.ParameterDict({'scale': nn.Parameter(torch.full((8,), 2.0)), 'shift': nn.Parameter(" \
         "torch.full((8,), -1.0))})"
    c("ParameterDict[key]", pd, "x * self.ps['scale'] + self.ps['shift']")
    c("ParameterDict keys/items/in", pd, "list(self.ps.keys()), 'scale' in self.ps, [v for _, v in self.ps.items()]")
    c("ParameterDict len", pd, "len(self.ps)")
    c("ParameterDict named_parameters", pd, "[n for n, _ in self.named_parameters()]")


_init_forms()
_layer_init_forms()
_parameter_forms()
_module_forms()
_container_forms()

FAMILIES = tuple(dict.fromkeys(f.family for f in FORMS))
HEADER = "import copy\nimport math\nfrom collections import OrderedDict\n\nimport numpy as np\nimport torch\nimport torch.nn as nn\n"


def family_source(forms: list[Form]) -> tuple[str, list[tuple[int, int]]]:
    """One source with a class per form (C0, C1, ...), and each form's (first, last) line."""
    parts, spans, line = [HEADER], [], HEADER.count("\n") + 1
    for i, form in enumerate(forms):
        text = "\n\n" + form.text(f"C{i}")
        first = line + 2
        line += text.count("\n")
        spans.append((first, line))
        parts.append(text)
    return "".join(parts), spans


# ------------------------------------------------------------------------------------------------------- comparison


def _plain(value):
    import mindspore as ms
    import torch

    if isinstance(value, torch.Tensor):
        return ("tensor", value.detach().numpy().copy())
    if isinstance(value, ms.Tensor):
        return ("tensor", value.asnumpy().copy())
    if isinstance(value, torch.Size):
        return ("value", tuple(value))
    if isinstance(value, dict):
        return ("dict", [(k, _plain(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return ("seq", [_plain(v) for v in value])
    if isinstance(value, np.generic):
        return ("value", value.item())
    return ("value", value)


def _stats_differ(w: np.ndarray, g: np.ndarray) -> str:
    """'' when a random draw g has the statistics of torch's draw w."""
    n = w.size
    tol = 0.1 + 3 / math.sqrt(max(n, 1))
    ws, gs = float(w.std()), float(g.std())
    if ws < 1e-12:
        return "" if gs < 1e-12 and abs(float(w.mean()) - float(g.mean())) < 1e-6 else f"std {gs:.3g}, torch {ws:.3g}"
    if abs(gs / ws - 1) > tol:
        return f"std {gs:.4g}, torch {ws:.4g}"
    if abs(float(g.mean()) - float(w.mean())) > tol * ws:
        return f"mean {float(g.mean()):.4g}, torch {float(w.mean()):.4g}"
    wz, gz = float((w == 0).mean()), float((g == 0).mean())
    if abs(wz - gz) > 0.05 + 2 / math.sqrt(n):
        return f"zero fraction {gz:.3f}, torch {wz:.3f}"
    span = float(w.max() - w.min())
    for name, a, b in (("min", w.min(), g.min()), ("max", w.max(), g.max())):
        if b < w.min() - 0.25 * span or b > w.max() + 0.25 * span:
            return f"{name} {float(b):.4g}, torch {float(a):.4g}"
    if w.ndim >= 2:
        def orth(t):
            m = t.reshape(t.shape[0], -1).astype(np.float64)
            gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
            d = np.diag(gram).mean()
            return bool(d > 0 and np.abs(gram / d - np.eye(len(gram))).max() < 1e-3)
        if orth(w) != orth(g):
            return f"orthogonal {orth(g)}, torch {orth(w)}"
    return ""


def compare(want, got, mode: str, path="out") -> str:
    (wk, wv), (gk, gv) = _plain(want), _plain(got)
    if wk != gk:
        return f"{path}: {gk} {str(gv)[:60]}, torch {wk} {str(wv)[:60]}"
    if wk == "tensor":
        if wv.shape != gv.shape:
            return f"{path}: shape {gv.shape}, torch {wv.shape}"
        if wv.dtype != gv.dtype:
            return f"{path}: dtype {gv.dtype}, torch {wv.dtype}"
        if mode == "random" and wv.dtype.kind == "f" and wv.size > 1:
            why = _stats_differ(wv, gv)
            return f"{path}: {why}" if why else ""
        if wv.dtype.kind in "fc":
            if not np.allclose(gv, wv, atol=1e-5, rtol=1e-4, equal_nan=True):
                return f"{path}: max |diff| {np.nanmax(np.abs(gv - wv)):.3g}"
        elif not np.array_equal(gv, wv):
            return f"{path}: values differ"
        return ""
    if wk in ("seq", "dict"):
        if len(wv) != len(gv):
            return f"{path}: {len(gv)} items {str(got)[:200]}, torch {len(wv)} {str(want)[:200]}"
        items = (zip(want, got) if wk == "seq" else
                 ((w, g) for (wk_, w), (gk_, g) in zip(want.items(), got.items())))
        if wk == "dict" and list(want) != list(got):
            return f"{path}: keys {list(got)}, torch {list(want)}"
        for i, (w, g) in enumerate(items):
            why = compare(w, g, mode, f"{path}[{i}]")
            if why:
                return why
        return ""
    if isinstance(wv, float) and isinstance(gv, (int, float)) and not isinstance(gv, bool):
        return "" if math.isclose(wv, gv, rel_tol=1e-5, abs_tol=1e-6) else f"{path}: {gv!r}, torch {wv!r}"
    if type(wv) is not type(gv) or wv != gv:
        return f"{path}: {gv!r} ({type(gv).__name__}), torch {wv!r} ({type(wv).__name__})"
    return ""


# ----------------------------------------------------------------------------------------------------------- runner


@dataclass
class Outcome:
    status: str  # pass | loud | crash | silent | rejected (torch itself refuses the form: not a case)
    detail: str = ""


@dataclass
class FamilyRun:
    outcomes: dict = field(default_factory=dict)  # form id -> Outcome
    source: str = ""
    converted: str = ""


def _exec(code: str, name: str) -> dict:
    ns: dict = {"__name__": name}
    exec(compile(code, f"<{name}>", "exec"), ns)  # noqa: S102 - the battery's own programs
    return ns


def run_forms(forms: list[Form]) -> FamilyRun:
    """Convert the forms' one source, run every form on both frameworks, judge each."""
    import contextlib
    import io
    import warnings

    import mindspore as ms
    import torch

    from mindport import convert_source, transfer_weights

    ms.set_context(mode=ms.PYNATIVE_MODE)
    source, spans = family_source(forms)
    run = FamilyRun(source=source)
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_ns = _exec(source, "surface_torch")
        wants = {}
        for i, form in enumerate(forms):
            try:
                torch.manual_seed(0)
                t_net = t_ns[f"C{i}"]()
                t_net.eval()
                rng = np.random.default_rng(0)
                x = rng.standard_normal(form.input).astype(np.float32) if form.input else None
                with torch.no_grad():
                    want = t_net(torch.from_numpy(x.copy()) if x is not None else None)
                wants[i] = (t_net, x, want)
            except Exception as ex:  # noqa: BLE001 - torch refuses the form: not a case
                run.outcomes[form.id] = Outcome("rejected", f"{type(ex).__name__}: {str(ex)[:120]}")
        result = convert_source(source, "surface.py")
        run.converted = result.code
        flagged: dict[int, list[str]] = {}
        for d in result.diagnostics:
            if d.severity in ("error", "warning"):
                for i, (a, b) in enumerate(spans):
                    if a <= d.line <= b:
                        flagged.setdefault(i, []).append(f"{d.code}: {d.message}"[:200])
        try:
            m_ns = _exec(result.code, "surface_ms")
        except Exception as ex:  # noqa: BLE001 - the whole converted file fails: every form crashes
            for i, form in enumerate(forms):
                run.outcomes.setdefault(form.id, Outcome("crash", f"module: {type(ex).__name__}: {ex}"[:200]))
            return run
        for i, form in enumerate(forms):
            if i not in wants:
                continue
            if i in flagged:
                run.outcomes[form.id] = Outcome("loud", "; ".join(flagged[i]))
                continue
            t_net, x, want = wants[i]
            try:
                ms.set_seed(0)
                m_net = m_ns[f"C{i}"]()
                m_net.set_train(False)
                if form.mode == "values":
                    state = t_net.state_dict()
                    if state:
                        transfer_weights(state, m_net)
                got = m_net(ms.Tensor(x.copy()) if x is not None else None)
            except Exception as ex:  # noqa: BLE001 - the outcome records it
                text = str(ex).strip().splitlines()
                run.outcomes[form.id] = Outcome("crash", f"{type(ex).__name__}: {text[0][:200] if text else ''}")
                continue
            why = compare(want, got, form.mode)
            run.outcomes[form.id] = Outcome("silent", why) if why else Outcome("pass")
    return run


def main(argv) -> int:
    import json
    import time

    out_json = None
    if "--json" in argv:
        k = argv.index("--json")
        out_json = argv[k + 1]
        argv = argv[:k] + argv[k + 2:]
    fams = [f for f in FAMILIES if not argv or f in argv]
    table, rows = {}, {}
    for fam in fams:
        t0 = time.time()
        run = run_forms([f for f in FORMS if f.family == fam])
        counts = {s: 0 for s in ("pass", "loud", "crash", "silent", "rejected")}
        for fid, o in run.outcomes.items():
            counts[o.status] += 1
            rows[f"{fam}::{fid}"] = (o.status, o.detail)
        table[fam] = counts
        print(f"{fam}: {counts}  ({time.time() - t0:.0f} s)", flush=True)
    print("\n| family | pass | loud | crash | silent | rejected by torch |\n|---|---:|---:|---:|---:|---:|")
    for fam, c in table.items():
        print(f"| {fam} | {c['pass']} | {c['loud']} | {c['crash']} | {c['silent']} | {c['rejected']} |")
    tot = {s: sum(c[s] for c in table.values()) for s in ("pass", "loud", "crash", "silent", "rejected")}
    print(f"| **total** | {tot['pass']} | {tot['loud']} | {tot['crash']} | {tot['silent']} | {tot['rejected']} |\n")
    for key, (status, detail) in rows.items():
        if status not in ("pass", "rejected"):
            print(f"{status:7s} {key}: {detail}")
    if out_json:
        with open(out_json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
