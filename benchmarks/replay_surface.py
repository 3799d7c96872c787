"""torch's random-drawing surface, enumerated from torch itself, against the entry points the proof's draw replay
(mindport/proofs/replay.py) records: every public callable of ``torch``, ``torch.Tensor`` and
``torch.nn.functional`` whose docstring says it draws (a ``generator`` argument, "randomly", "pseudorandom"), each
marked replayed or not, and the MindSpore entry points the replay serves.

    python benchmarks/replay_surface.py
"""
from __future__ import annotations

import re

_DRAWS = re.compile(r"generator \(:class:`torch.Generator`|\bgenerator=None|pseudorandom|[Rr]andomly")


def torch_surface() -> list[str]:
    import torch
    import torch.nn.functional as F  # noqa: N812

    names = []
    for owner, prefix in ((torch, "torch"), (torch.Tensor, "torch.Tensor"), (F, "torch.nn.functional")):
        for name in dir(owner):
            if name.startswith("_"):
                continue
            try:
                obj = getattr(owner, name)
            except Exception:  # noqa: BLE001 - a lazy attribute that fails to load draws nothing
                continue
            doc = getattr(obj, "__doc__", None)
            if callable(obj) and isinstance(doc, str) and _DRAWS.search(doc):
                names.append(f"{prefix}.{name}")
    return names


def replayed(framework: str) -> list[str]:
    import torch
    import torch.nn.functional as F  # noqa: N812

    from mindport.proofs.replay import Stream, _ms_patches, _torch_patches

    if framework == "torch":
        prefixes = {torch: "torch", torch.Tensor: "torch.Tensor", F: "torch.nn.functional"}
        return [f"{prefixes[owner]}.{name}" for owner, name, _ in _torch_patches(Stream())]
    out = []
    for owner, name, _ in _ms_patches(Stream()):
        out.append(f"{getattr(owner, '__module__', '') if isinstance(owner, type) else owner.__name__}."
                   f"{owner.__name__ + '.' if isinstance(owner, type) else ''}{name}")
    return out


def main() -> None:
    surface, ours = torch_surface(), set(replayed("torch"))
    print(f"torch's drawing surface (by docstring): {len(surface)}, replayed {len([n for n in surface if n in ours])}")
    for name in surface:
        print(f"  {'replayed' if name in ours else 'NOT replayed':12s} {name}")
    extra = sorted(ours - set(surface))
    print(f"replayed beyond the docstring search: {', '.join(extra) or '-'}")
    print("through the above: torch.distributions' sample/rsample (torch.normal, Tensor.normal_, torch.rand, "
          "torch.bernoulli, torch.multinomial), F.gumbel_softmax (Tensor.exponential_), nn.Dropout* (F.dropout*)")
    ms_points = replayed("mindspore")
    print(f"MindSpore entry points replaying them: {len(ms_points)}: {', '.join(ms_points)}")


if __name__ == "__main__":
    main()


# each torch draw as a program: converted by the converter, run under the replay on both sides, outputs compared
PROGRAMS = [
    "torch.randn(2, 3)", "torch.rand(2, 3)", "torch.randn_like(x)", "torch.rand_like(x)",
    "torch.randint(0, 10, (2, 3))", "torch.randint(10, (2, 3))", "torch.randint_like(x, 0, 10)", "torch.randperm(6)",
    "torch.normal(x, torch.ones_like(x))", "torch.normal(0.0, 1.0, size=(2, 3))", "torch.normal(x, 0.5)",
    "torch.bernoulli(p)", "torch.multinomial(p, 2)", "torch.multinomial(p, 4, replacement=True)",
    "x.clone().uniform_(-1, 1)", "x.clone().normal_(2.0, 0.5)", "x.clone().bernoulli_(0.3)",
    "x.clone().exponential_(2.0)", "x.clone().log_normal_()", "x.clone().cauchy_()", "x.clone().geometric_(0.3)",
    "x.clone().random_(0, 5)", "p.bernoulli()", "p.multinomial(2)",
    "F.dropout(x, 0.3, training=True)", "F.dropout1d(x3, 0.5, training=True)", "F.dropout2d(x4, 0.5, training=True)",
    "F.dropout3d(x5, 0.5, training=True)", "torch.nn.Dropout(0.3)(x)", "torch.nn.Dropout1d(0.5)(x3)",
    "torch.nn.Dropout2d(0.5)(x4)",
    "torch.nn.Dropout3d(0.5)(x5)",
    "F.gumbel_softmax(x, tau=0.5)", "F.gumbel_softmax(x, tau=0.5, hard=True)",
    "torch.distributions.Normal(x, torch.ones_like(x)).rsample()",
    "torch.distributions.Normal(x, torch.ones_like(x)).sample()",
    "torch.distributions.Uniform(torch.zeros(3), torch.ones(3)).sample((2,))",
    "torch.distributions.Bernoulli(probs=p).sample()", "torch.distributions.Categorical(probs=p).sample()",
    "torch.distributions.Exponential(torch.ones(3)).sample()",
    "torch.distributions.Laplace(torch.zeros(3), torch.ones(3)).sample()",
    # with generator=: mindport.runtime draws from the generator's own stream, which the replay serves
    "torch.randn(2, 3, generator=torch.Generator().manual_seed(1))",
    "torch.rand(2, 3, generator=torch.Generator().manual_seed(1))",
    "torch.randint(0, 5, (4,), generator=torch.Generator().manual_seed(1))",
    "torch.randperm(5, generator=torch.Generator().manual_seed(1))",
    "x.clone().normal_(0.0, 2.0, generator=torch.Generator().manual_seed(1))",
]


def programs() -> list[tuple[str, str, str]]:
    """(program, verdict, detail): "equal" (the port's outputs equal torch's on the replayed draws), "differs",
    "diverged" (the replay's own check), "raised" (the port raised otherwise)."""
    import importlib.util
    import tempfile
    from pathlib import Path

    import numpy as np
    import torch

    from mindport.migrator import convert_source
    from mindport.proofs.replay import DrawsDiverged, drawing

    rng = np.random.default_rng(0)
    arrays = {"x": rng.random((2, 3)).astype(np.float32) + 0.1, "p": np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]],
                                                                               np.float32),
              "x3": rng.random((2, 3, 4)).astype(np.float32), "x4": rng.random((2, 3, 4, 4)).astype(np.float32),
              "x5": rng.random((2, 3, 2, 2, 2)).astype(np.float32)}
    head = "import torch\nimport torch.nn.functional as F\n\n\ndef f(x, p, x3, x4, x5):\n    return "
    out = []
    folder = Path(tempfile.mkdtemp(prefix="replay-surface-"))
    for k, program in enumerate(PROGRAMS):
        source = head + program + "\n"
        try:
            ms_file = folder / f"p{k}.py"
            ms_file.write_text(convert_source(source, "p.py").code)
            spec = importlib.util.spec_from_file_location(f"p{k}", ms_file)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            scope: dict = {}
            exec(compile(source, "torch_program", "exec"), scope)  # noqa: S102 - our own program text
            with drawing("torch") as stream:
                want = scope["f"](**{n: torch.from_numpy(a) for n, a in arrays.items()})
            import mindspore as ms

            with drawing("mindspore", [d.as_dict() for d in stream.tape]):
                got = module.f(**{n: ms.Tensor(a) for n, a in arrays.items()})
            a, b = want.numpy().astype(np.float64), got.asnumpy().astype(np.float64)
            same = a.shape == b.shape and np.allclose(a, b, rtol=1e-5, atol=1e-6)
            out.append((program, "equal" if same else "differs",
                        f"{len(stream.tape)} draw(s)" + ("" if same else f"; max |diff| {np.abs(a - b).max()}")))
        except DrawsDiverged as exc:
            out.append((program, "diverged", str(exc)[:200]))
        except Exception as exc:  # noqa: BLE001 - measured, reported
            out.append((program, "raised", f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"))
    return out


if __name__ == "__main__":
    from collections import Counter

    results = programs()
    for program, verdict, detail in results:
        print(f"  {verdict:8s} {program}  ({detail})")
    print("programs:", dict(Counter(v for _, v, _ in results)))
