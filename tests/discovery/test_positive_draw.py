"""The proof's second weight draw (``TorchSide.randomize_all``) makes every floating parameter random, vectors with a
random sign. A model that keeps its running variance as a Parameter (not a buffer named running_var) and gives it to
``F.batch_norm`` (openai/consistency_models' InceptionC), or takes ``sqrt`` of a scale Parameter, got negative values:
torch NaN, MindSpore finite after its ReLU (NaN -> 0), and the proof said "diverged" though the port is right. The draw now reads how each
parameter is used (a forward under a torch function mode) and keeps those it needs >= 0 so."""
import textwrap

import numpy as np

MODELS = textwrap.dedent('''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class FrozenNorm(nn.Module):
        def __init__(self, channels=4):
            super().__init__()
            self.conv = nn.Conv2d(3, channels, 3, padding=1)
            self.mean = nn.Parameter(torch.zeros(channels), requires_grad=False)
            self.var = nn.Parameter(torch.ones(channels), requires_grad=False)
            self.gain = nn.Parameter(torch.ones(channels))
            self.shift = nn.Parameter(torch.zeros(channels))

        def forward(self, x):
            return F.relu(F.batch_norm(self.conv(x), self.mean, self.var, self.gain, self.shift, False, 0.0, 1e-3))


    class ScaledByRoot(nn.Module):
        def __init__(self, features=6):
            super().__init__()
            self.fc = nn.Linear(features, features)
            self.scale = nn.Parameter(torch.ones(features))

        def forward(self, x):
            return self.fc(x) / self.scale.sqrt() + torch.log(self.scale)
''')


def test_positive_uses_kept_positive_by_use():
    import torch

    from mindport.validators.parity.side_torch import TorchSide

    namespace = {}
    exec(compile(MODELS, "<models>", "exec"), namespace)  # noqa: S102 - the fixture's own torch models
    for name, shape, positive, signed in (("FrozenNorm", (2, 3, 8, 8), {"var"}, "gain"),
                                          ("ScaledByRoot", (2, 6), {"scale"}, "fc.bias")):
        side = TorchSide()
        side.model = namespace[name]()
        arrays = [np.random.default_rng(0).standard_normal(shape).astype(np.float32)]
        side.randomize_all(7, arrays)
        params = dict(side.model.named_parameters())
        for p in positive:
            assert bool((params[p] > 0).all()), (name, p, params[p])
        assert bool((params[signed] < 0).any()), (name, signed)  # the other vectors keep their random sign
        with torch.no_grad():
            out = side.model(torch.from_numpy(arrays[0]))
        assert bool(torch.isfinite(out).all()), name


def test_frozen_norm_parameter_proven_at_the_random_draw(tmp_path):
    """End to end: converted, proven at the own init and at the random draw (before: "diverged" at the random
    draw, torch NaN against MindSpore's finite values)."""
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "models.py").write_text(MODELS, encoding="utf-8")
    convert_path(src, out, jobs=1, force=True)
    models, _ = prove_models(src, out, pattern="models.py:*", cache=False)
    status = {m["class"].split(":")[1]: m for m in models}
    for name in ("FrozenNorm", "ScaledByRoot"):
        m = status[name]
        assert m["status"] == "proven", (name, m)
        assert [d["draw"] for d in m["draws"]] == ["own init", "random draw"], m
