"""Names Python, NumPy and SciPy removed (``mindport/legacy_names.toml``): ``collections.Sequence`` (Python 3.10),
``np.float`` / ``np.int`` ... (NumPy 1.24), ``scipy.signal.blackmanharris`` (SciPy 1.13). Model code written before
the removals stopped at import or in its constructor on both sides of a discovery proof (disc10: DeepRL 5/5,
N-BEATS TrendBasis, nnAudio). The converter writes the current names (rule LegacyNameTransform); the reference
(torch) side of builder and proof gets the old names back bound to the same objects
(``mindport.discovery.legacy_names``), so such a model is built, converted and proven against torch."""
from __future__ import annotations

import importlib

LEGACY_MODEL = '''
import collections
from collections import Sequence
import numpy as np
import scipy.signal
import torch
import torch.nn as nn


def _pair(v):
    return tuple(v) if isinstance(v, collections.Iterable) else (v, v)


class WindowedProjection(nn.Module):
    def __init__(self, n_fft=16, sizes=(16, 8)):
        super().__init__()
        assert isinstance(sizes, Sequence)
        self.size = _pair(sizes)
        window = scipy.signal.blackmanharris(n_fft).astype(np.float)
        steps = np.arange(n_fft, dtype=np.float) / np.float(n_fft)
        self.register_buffer("window", torch.tensor(window, dtype=torch.float32))
        self.register_buffer("ramp", torch.from_numpy(steps.astype(np.float32)))
        self.lin = nn.Linear(self.size[0], self.size[1])
        self.k = np.int(self.size[1] // 2)

    def forward(self, x):
        y = self.lin(x * self.window + self.ramp)
        return y[..., :self.k]
'''


def test_the_reference_side_gets_each_old_name_as_the_object_it_was():
    """Every old name of the table is, after ``install()``, the object its current name holds (NumPy 1.20's
    release notes: ``np.float`` was ``float``, ``np.long`` ``int``, ``np.unicode`` ``str``; collections' ABC
    aliases were collections.abc's classes; scipy.signal's windows were scipy.signal.windows' functions)."""
    import builtins
    import collections
    import collections.abc

    import numpy as np
    import scipy.signal
    import scipy.signal.windows

    from mindport.discovery import legacy_names
    from mindport.legacy_names import legacy

    legacy_names.install()
    try:
        _check_restored(legacy)
    finally:
        legacy_names.uninstall()
    assert not hasattr(np, "float") and not hasattr(collections, "Sequence")


def _check_restored(legacy):
    import builtins
    import collections
    import collections.abc

    import numpy as np
    import scipy.signal
    import scipy.signal.windows

    assert np.float is float and np.int is int and np.bool is bool and np.object is object
    assert np.long is int and np.unicode is str and np.complex is complex and np.str is str
    assert collections.Sequence is collections.abc.Sequence and collections.Mapping is collections.abc.Mapping
    assert scipy.signal.blackmanharris is scipy.signal.windows.blackmanharris
    assert scipy.signal.hanning is scipy.signal.windows.hann
    for old, new in legacy().items():
        old_mod, _, old_name = old.rpartition(".")
        new_mod, _, new_name = new.rpartition(".")
        target = builtins if new_mod == "builtins" else importlib.import_module(new_mod)
        assert getattr(importlib.import_module(old_mod), old_name) is getattr(target, new_name), old


def test_old_names_are_converted_to_the_current_ones():
    from mindport.migrator import convert_source

    result = convert_source(LEGACY_MODEL)
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    code = result.code
    for old in ("np.float)", "np.float(", "np.int(", "collections.Iterable", "from collections import Sequence",
                "scipy.signal.blackmanharris"):
        assert old not in code, (old, code)
    assert "from collections.abc import Sequence" in code and "collections.abc.Iterable" in code
    assert "import collections.abc" in code and "scipy.signal.windows.blackmanharris(n_fft)" in code


def test_a_model_with_old_names_is_built_converted_and_proven(tmp_path):
    """Before: not built ("cannot import name 'Sequence' from 'collections'"); now built in torch with the old
    names restored, converted with the current names, and proven (own weights, random draw, GRAPH_MODE)."""
    from mindport.discovery.prove import prove_models
    from mindport.migrator.repo import convert_path

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "legacy.py").write_text(LEGACY_MODEL)
    convert_path(src, out, jobs=1, force=True)
    converted = (out / "legacy.py").read_text()
    assert "np.float" not in converted.replace("np.float32", "") and "collections.abc" in converted, converted
    models, _ = prove_models(src, out, pattern="legacy.py:*", cache=False)
    (model,) = models
    assert model["status"] == "proven", model
