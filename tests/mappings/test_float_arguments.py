"""A layer argument torch declares as a float but accepts as an int (``nn.Dropout2d(0)``, ERFNet's
``non_bottleneck_1d(64, 0, 1)``; ``GroupNorm(eps=0)``, ``LocalResponseNorm(k=1)`` ...): MindSpore's constructors check
the type ("the type of 'p' should be 'float', but got type 'int'"). Enumerated from the tables: every layer entry,
every argument whose torch default is a float, given as an int literal and as a variable holding an int; the
converted layer builds and its output matches torch's (eval mode)."""
from __future__ import annotations

import ast

import numpy as np
import pytest

from mindport.mappings import load_registry
from mindport.migrator import convert_source
from mindport.migrator.weights import transfer_weights
from mindport.proofs.function import make_input


def _cases():
    import torch

    cases = []
    for entry in sorted(load_registry().entries.values(), key=lambda e: e.torch):
        if entry.kind != "layer" or not entry.supported or entry.example is None or not entry.signature:
            continue
        if entry.example.program or entry.example.compare != "values":
            continue
        names = [p.name for p in entry.signature]
        call = ast.parse(f"f({entry.example.args})", mode="eval").body
        for param in entry.signature:
            try:
                default = ast.literal_eval(param.default) if param.default is not None else None
            except ValueError:
                continue
            if not isinstance(default, float):
                continue
            keep = call.args[: names.index(param.name)] if param.kind == "positional" else call.args
            args = [ast.unparse(a) for a in keep]
            args += [f"{k.arg}={ast.unparse(k.value)}" for k in call.keywords if k.arg != param.name]
            probability = param.name in ("p", "dropout")  # 1 drops everything (MindSpore refuses it): 0
            for value in dict.fromkeys([0, 1] if probability else [int(default) or 1, 1, 2, 0]):
                text = ", ".join([*args, f"{param.name}={value}"])
                try:  # torch builds and runs with this int (a zero eps, alpha or margin may be degenerate)
                    layer = eval(f"torch.nn.{entry.torch.rsplit('.', 1)[1]}({text})", {"torch": torch})  # noqa: S307
                    _forward(layer.eval(), entry, torch.tensor)
                except Exception:  # torch refuses this int here: not a case
                    continue
                cases.append(pytest.param(entry, ", ".join(args), param.name, value,
                                          id=f"{entry.torch.rsplit('.', 1)[1]}-{param.name}={value}"))
                break
    return cases


def _forward(layer, entry, tensor):
    rng = np.random.default_rng(0)
    inputs = {k: make_input(spec, rng) for k, spec in entry.example.inputs.items()}
    names = {k: tensor(v) if isinstance(v, np.ndarray) else v for k, v in inputs.items()}
    out = eval(f"_layer({entry.example.call or 'x'})", {"_layer": layer, **names})  # noqa: S307
    return out[0] if isinstance(out, tuple) else out


CASES = _cases()


def test_the_enumeration_reaches_the_known_members():
    ids = {c.id for c in CASES}
    for known in ("Dropout2d-p=0", "GroupNorm-eps=1", "LocalResponseNorm-k=1", "PReLU-init=1", "BatchNorm2d-eps=1"):
        assert known in ids, sorted(ids)


@pytest.mark.parametrize("spelling", ["literal", "variable"])
@pytest.mark.parametrize(("entry", "args", "name", "value"), CASES)
def test_int_for_a_float_argument_builds_and_matches(entry, args, name, value, spelling):
    import mindspore as ms
    import torch

    given = str(value) if spelling == "literal" else "n"
    sep = ", " if args else ""
    source = (f"import torch\n\n\ndef build(n={value}):\n"
              f"    return {entry.torch}({args}{sep}{name}={given})\n")
    result = convert_source(source, "<float-args>")
    t_ns: dict = {}
    m_ns: dict = {}
    exec(compile(source, "<torch>", "exec"), t_ns)  # noqa: S102 - our own snippets
    exec(compile(result.code, "<ms>", "exec"), m_ns)  # noqa: S102
    t_layer, m_layer = t_ns["build"]().eval(), m_ns["build"]()
    m_layer.set_train(False)
    if isinstance(t_layer, torch.nn.modules.lazy.LazyModuleMixin):  # parameters take their shapes at a first call
        with torch.no_grad():
            _forward(t_layer, entry, torch.tensor)
        _forward(m_layer, entry, ms.Tensor)
    if t_layer.state_dict():
        transfer_weights(t_layer.state_dict(), m_layer)
    with torch.no_grad():
        want = _forward(t_layer, entry, torch.tensor)
    got = _forward(m_layer, entry, ms.Tensor)
    np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-4, atol=1e-5)
