"""A forward that draws random values is proven on one stream of draws (mindport/proofs/replay.py): torch records,
the MindSpore port replays, and a port that draws otherwise fails with the draw it diverged at.

Real torch + MindSpore, the fixture converted by the converter (models/random_draws.py): a VAE (randn_like), noise
injection (randn), dropout with training=True in eval, a multinomial sampler, Gumbel-softmax + a distribution's
rsample; each proven in process (``compare``), and each failing when its port is edited to draw differently (one draw
more, another p, another shape, without replacement). One ``validate`` run (two processes, with gradients) covers the
side workers. The torch surface and the entry points on both sides are enumerated in replay.py; this is the slice the
fixture's five models reach (about 30 s on one core)."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from parity_helpers import MODELS
from mindport.proofs.replay import DrawsDiverged, drawing
from mindport.validators.parity.compare import compare, validate

INPUTS = {"VAE": (2, 12), "NoiseInjection": (2, 4, 8, 8), "MCDropout": (2, 10), "Sampler": (2, 8),
          "GumbelPolicy": (3, 6)}


def _converted(tmp_path, edits=()):
    from mindport.migrator import convert_source

    code = convert_source((MODELS / "random_draws.py").read_text(), "random_draws.py").code
    for old, new in edits:
        assert old in code, f"{old!r} not in the converted code:\n{code}"
        code = code.replace(old, new, 1)
    path = tmp_path / f"random_draws_ms_{abs(hash(edits))}.py"
    path.write_text(code)
    return path


def _module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pair(tmp_path, name, edits=()):
    import torch

    torch.manual_seed(0)
    torch_model = getattr(_module(MODELS / "random_draws.py", "random_draws_torch"), name)()
    cell = getattr(_module(_converted(tmp_path, edits), f"random_draws_ms_{name}"), name)()
    x = np.random.default_rng(1).standard_normal(INPUTS[name]).astype(np.float32)
    return torch_model, cell, x


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_random_forward_is_proven_on_replayed_draws(tmp_path, name):
    torch_model, cell, x = _pair(tmp_path, name)
    report = compare(torch_model, cell, [x])
    assert report.ok, report.ms_error or [(o.key, o.max_abs) for o in report.outputs]
    assert report.settings["replayed_draws"] >= 1
    assert report.graph.status == "skipped" and "replayed" in report.graph.error
    assert all(o.max_abs is not None and o.max_abs < 1e-5 for o in report.outputs)


def test_torch_forward_is_deterministic_on_the_stream_and_random_without_it(tmp_path):
    import torch

    torch_model, _, x = _pair(tmp_path, "VAE")
    with torch.no_grad():
        runs = []
        for _ in range(2):
            with drawing("torch"):
                runs.append(torch_model(torch.from_numpy(x))[0].numpy())
        free = [torch_model(torch.from_numpy(x))[0].numpy() for _ in range(2)]
    assert np.array_equal(runs[0], runs[1]) and not np.array_equal(free[0], free[1])


@pytest.mark.parametrize("name, edit, message", [
    # a port drawing twice: its second draw has nothing recorded
    ("VAE", ("eps = ops.randn_like(std, dtype=std.dtype)",
             "eps = ops.randn_like(std, dtype=std.dtype) * 0 + ops.randn_like(std, dtype=std.dtype)"),
     "draws again"),
    # noise per channel where torch draws one plane per sample: another shape
    ("NoiseInjection", ("noise = ops.randn(b, 1, hh, ww)", "noise = ops.randn(b, 4, hh, ww)"), "shape (2, 4, 8, 8)"),
    # the keep probability where torch has the drop probability
    ("MCDropout", ("p=0.25", "p=0.75"), "p=0.75"),
    # without replacement: other draws (one per category)
    ("Sampler", ("replacement=True", "replacement=False"), "replacement=False"),
    # a port that never draws: torch's draw is left unread
    ("VAE", ("eps = ops.randn_like(std, dtype=std.dtype)", "eps = ops.zeros_like(std)"), "drew 0 time(s)"),
])
def test_a_port_that_draws_otherwise_fails_at_its_draw(tmp_path, name, edit, message):
    torch_model, cell, x = _pair(tmp_path, name, (edit,))
    report = compare(torch_model, cell, [x], graph_mode=False)
    assert not report.ok
    assert "the draw sequence diverged at draw" in report.ms_error and message in report.ms_error, report.ms_error
    if "drew 0" not in message:  # the port's statement that drew is named (a draw left unread: at the forward's end)
        assert "random_draws_ms_" in report.ms_error_site, report.ms_error_site


def test_replay_checks_kind_shape_and_count():
    tape = [{"api": "torch.randn", "family": "normal", "base": "normal", "shape": [2], "params": {},
             "values": np.array([0.5, -1.0])}]
    from mindspore import ops

    original = ops.randn
    with drawing("mindspore", tape):
        assert ops.randn(2).asnumpy().tolist() == [0.5, -1.0]
    with pytest.raises(DrawsDiverged, match="draw 1 of 1: torch drew torch.randn"):
        with drawing("mindspore", tape):
            ops.rand(2)  # uniform where torch drew normal
    assert ops.randn is original  # the entry points are given back


def test_validate_proves_a_vae_with_gradients_in_side_processes(tmp_path):
    ms_file = _converted(tmp_path)
    report = validate(f"{MODELS}/random_draws.py:VAE", f"{ms_file}:VAE", inputs=["2x12:float32"], grad=True)
    assert report.ok and report.settings["replayed_draws"] == 1
    assert report.grad is not None and report.grad.ok


def test_each_torch_draw_converts_to_a_port_that_replays_it_equal():
    """benchmarks/replay_surface.py: torch's drawing surface enumerated from its docstrings, each replayed API (and
    torch.distributions' samplers, gumbel_softmax, the Dropout layers, draws with generator=) as a program converted
    by the converter and run on both sides on one stream: all 46 programs give torch's values (about 20 s). Not
    replayed, named: the low-rank SVD/PCA (random projections), poisson and feature_alpha_dropout."""
    from parity_helpers import REPO

    spec = importlib.util.spec_from_file_location("replay_surface", REPO / "benchmarks" / "replay_surface.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = module.programs()
    assert [r for r in results if r[1] != "equal"] == [] and len(results) == len(module.PROGRAMS)
    left = set(module.torch_surface()) - set(module.replayed("torch"))
    assert left <= {"torch.pca_lowrank", "torch.svd_lowrank", "torch.poisson",
                    "torch.nn.functional.feature_alpha_dropout"}, left


def test_the_sweep_classes_a_replay_mismatch():
    """discovery's proof writes "the MindSpore Cell raised (own init): <the port's error>"; a replay mismatch is its
    own class, not "MindSpore: forward raises"."""
    from parity_helpers import REPO

    spec = importlib.util.spec_from_file_location("discovery_sweep", REPO / "benchmarks" / "discovery_sweep.py")
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    entry = {"status": "ms-failed", "error": "the MindSpore Cell raised (own init): DrawsDiverged: the draw sequence "
                                             "diverged at draw 2: torch drew 1 time(s), the MindSpore port draws again"}
    assert sweep.failure_class(entry) == "MindSpore: draws otherwise than torch (replayed draws)"
