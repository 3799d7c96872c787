"""Object-surface sweep (session 30): small torch programs, one per member of torch's object surface that model code
uses (layer weights' shapes and .data, init code, state_dict, _parameters/_modules dicts, module order, apply,
requires_grad freezing, base-class __init__ ...). Each is converted by the real converter and run in torch and on
MindSpore (torch's weights transferred by the weight rules); each is classified

    ok       same outputs
    silent   converted without a diagnostic, different outputs (the worst: wrong values, no error)
    loud     the converted program raises
    flagged  the converter reports a diagnostic (the site keeps torch's meaning and is flagged)

    python benchmarks/objsurf_sweep.py [-v] [NAME ...]
"""
from __future__ import annotations

import os
import sys
import textwrap

import numpy as np

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"


def _net(init: str, forward: str, run: str) -> str:
    return HEAD + (
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        + textwrap.indent(textwrap.dedent(init).strip("\n"), " " * 8) + "\n\n"
        + "    def forward(self, x):\n" + textwrap.indent(textwrap.dedent(forward).strip("\n"), " " * 8) + "\n\n\n"
        + "def build():\n    return Net()\n\n\n"
        + "def run(model, x):\n" + textwrap.indent(textwrap.dedent(run).strip("\n"), " " * 4) + "\n")


C1 = "self.conv = nn.Conv1d(4, 6, 3)"
C1T = "self.conv = nn.ConvTranspose1d(4, 6, 3)"
X1 = (2, 4, 9)
PROGRAMS: dict[str, tuple[str, tuple]] = {
    # Conv1d / ConvTranspose1d weight surface
    "conv1d.weight.shape": (_net(C1, "return self.conv(x)", "return tuple(model.conv.weight.shape), model(x)"), X1),
    "conv1d.weight.shape[2]": (_net(C1, "return self.conv(x)", "return model.conv.weight.shape[2]"), X1),
    "conv1d.weight.size(-1)": (_net(C1, "return self.conv(x)", "return model.conv.weight.size(-1)"), X1),
    "conv1d.weight.dim()": (_net(C1, "return self.conv(x)", "return model.conv.weight.dim()"), X1),
    "conv1d.named_parameters shapes": (_net(C1, "return self.conv(x)",
                                            "return [tuple(p.shape) for n, p in model.named_parameters()]"), X1),
    "conv1d.parameters numel": (_net(C1, "return self.conv(x)",
                                     "return sum(p.numel() for p in model.parameters())"), X1),
    "conv1d.state_dict shapes": (_net(C1, "return self.conv(x)",
                                      "return [tuple(v.shape) for v in model.state_dict().values()]"), X1),
    "conv1d.weight.view": (_net(C1, "return self.conv(x)",
                                "return model.conv.weight.view(6, -1).sum(1)"), X1),
    "conv1d.weight.data assign": (_net(C1 + "\nself.conv.weight.data = torch.ones(6, 4, 3)",
                                       "return self.conv(x)", "return model(x)"), X1),
    "conv1d.weight[..., 0] read": (_net(C1, "return self.conv(x)", "return model.conv.weight[:, :, 0]"), X1),
    "conv1d.weight in forward (F.conv1d)": (_net(C1, "return F.conv1d(x, self.conv.weight, self.conv.bias)",
                                                 "return model(x)"), X1),
    "conv1d.init fill via apply": (_net(C1, "return self.conv(x)", """
        def init(m):
            if isinstance(m, nn.Conv1d):
                nn.init.constant_(m.weight, 0.5)
                nn.init.zeros_(m.bias)
        model.apply(init)
        return model(x)"""), X1),
    "conv1d.fan from weight": (_net(C1, "return self.conv(x)", """
        w = model.conv.weight
        fan_in = w.size(1) * w.size(2)
        return fan_in"""), X1),
    "convtranspose1d.weight.shape": (_net(C1T, "return self.conv(x)",
                                          "return tuple(model.conv.weight.shape), model(x)"), X1),
    # module object surface
    "state_dict keys": (_net("self.fc = nn.Linear(4, 3)\nself.bn = nn.BatchNorm1d(3)", "return self.bn(self.fc(x))",
                             "return list(model.state_dict().keys())"), (2, 4)),
    "_parameters/_modules keys": (_net("self.fc = nn.Linear(4, 3)\nself.w = nn.Parameter(torch.ones(3))",
                                       "return self.fc(x) * self.w",
                                       "return list(model._parameters.keys()), list(model._modules.keys()), "
                                       "list(model.fc._parameters.keys())"), (2, 4)),
    "_buffers keys": (_net("self.fc = nn.Linear(4, 3)\nself.register_buffer('m', torch.zeros(3))",
                           "return self.fc(x) + self.m", "return list(model._buffers.keys())"), (2, 4)),
    "named_modules order": (_net("self.b = nn.Linear(4, 4)\nself.a = nn.Sequential(nn.ReLU(), nn.Linear(4, 3))",
                                 "return self.a(self.b(x))",
                                 "return [n for n, _ in model.named_modules()]"), (2, 4)),
    "children order": (_net("self.b = nn.Linear(4, 4)\nself.a = nn.ReLU()", "return self.a(self.b(x))",
                            "return [type(c).__name__ for c in model.children()]"), (2, 4)),
    "buffer persistent=False": (_net("self.fc = nn.Linear(4, 3)\nself.register_buffer('m', torch.ones(3), "
                                     "persistent=False)", "return self.fc(x) + self.m",
                                     "return sorted(model.state_dict().keys()), model(x)"), (2, 4)),
    "apply isinstance Linear": (_net("self.fc = nn.Linear(4, 3)", "return self.fc(x)", """
        def init(m):
            if isinstance(m, nn.Linear):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
        model.apply(init)
        return model(x)"""), (2, 4)),
    "requires_grad_ freeze + filter": (_net("self.a = nn.Linear(4, 4)\nself.b = nn.Linear(4, 3)\n"
                                            "self.a.requires_grad_(False)", "return self.b(self.a(x))",
                                            "return len(list(filter(lambda p: p.requires_grad, "
                                            "model.parameters())))"), (2, 4)),
    "ELU alpha": (_net("self.act = nn.ELU(alpha=0.5)", "return self.act(x)", "return model(x)"), (2, 4)),
    "AdaptiveAvgPool2d attribute": (_net("self.pool = nn.AdaptiveAvgPool2d((1, 1))", "return self.pool(x)",
                                         "return model.pool.output_size, model(x)"), (2, 3, 4, 4)),
    "weight.data.normal_ then shape": (_net("self.fc = nn.Linear(4, 3)\nself.fc.weight.data.fill_(0.1)",
                                            "return self.fc(x)", "return model(x)"), (2, 4)),
    "extra_repr": (HEAD + textwrap.dedent("""
        class Scale(nn.Module):
            def __init__(self, s):
                super().__init__()
                self.s = s

            def extra_repr(self):
                return f"s={self.s}"

            def forward(self, x):
                return x * self.s


        def build():
            return nn.Sequential(Scale(2.0), nn.ReLU())


        def run(model, x):
            return model(x)
        """), (2, 4)),
}


def _member_value_programs() -> dict[str, tuple[str, tuple]]:
    """torch.nn.Module's members read as values (mindport/mappings/data/surface/module_members.toml, session 49):
    per ``bound`` member, ``self.<name>`` read in a model method and ``self.fc.<name>``, used as the table says
    (mindport.proofs.surface.member_value_program)."""
    from mindport.mappings.surface import member_values
    from mindport.proofs.surface import member_value_program

    return {f"module value: self.{name}": (member_value_program(name), (2, 4)) for name in sorted(member_values("bound"))}


PROGRAMS.update(_member_value_programs())


def classify(name: str, source: str, shape: tuple) -> tuple[str, str]:
    import mindspore as ms
    import torch

    from mindport.migrator import convert_source
    from mindport.proofs.function import _build_pair, _load
    from mindport.proofs.surface import _plain_data, values_equal

    try:
        result = convert_source(source, f"<objsurf {name}>")
    except Exception as exc:  # noqa: BLE001
        return "loud", f"converter: {type(exc).__name__}: {exc}"
    if result.diagnostics:
        return "flagged", "; ".join(d.format() for d in result.diagnostics)[:300]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    try:
        torch.manual_seed(0)
        t_mod, m_mod = _load(source, "objsurf_torch"), _load(result.code, "objsurf_ms")
        t_model, m_model = _build_pair(t_mod, m_mod, False)
        with torch.no_grad():
            t_out = t_mod.run(t_model, torch.tensor(x))
    except Exception as exc:  # noqa: BLE001
        return "torch-error", f"{type(exc).__name__}: {exc}"
    try:
        m_out = m_mod.run(m_model, ms.Tensor(x))
    except Exception as exc:  # noqa: BLE001
        return "loud", f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}"
    try:
        same = values_equal(_plain_data(t_out), _plain_data(m_out))
    except Exception:  # noqa: BLE001
        same = False
    if not same:
        return "silent", f"torch {str(t_out)[:150]!s} != MindSpore {str(m_out)[:150]!s}"
    return "ok", ""


def main(argv: list[str]) -> int:
    os.environ.setdefault("GLOG_v", "3")
    verbose = "-v" in argv
    names = [a for a in argv if not a.startswith("-")] or list(PROGRAMS)
    counts: dict[str, int] = {}
    for name in names:
        source, shape = PROGRAMS[name]
        kind, detail = classify(name, source, shape)
        counts[kind] = counts.get(kind, 0) + 1
        print(f"{kind:8} {name}" + (f"  -- {detail}" if detail and (verbose or kind != "ok") else ""))
    print(f"objsurf: {len(names)} programs: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
