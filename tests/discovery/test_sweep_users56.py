"""proof56: the sweep's partial conversion and the modules a recorded constructor names.

The builder takes a model's constructor from the repository's own call (in the file that imports the model file,
its user) and records the objects built there by their modules (``Encoder(attn_layers=[Layer(attention=
__import__('layers.corr', fromlist=['_']).Corr(d=8))])``). The sweep converted only the model file and what it
imports: ``layers/corr.py`` was left out, the MindSpore side's ``__import__`` found no file, ``--stub-missing`` gave
a stand-in layer with no parameters, and the weights never mapped ("torch tensors unmatched: attn_layers.0.attention.
proj.weight"; thuml/Autoformer ``Encoder``, MAZiqing/FEDformer ``DecoderLayer`` in agg55's sampled proof)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

CORR = '''
import torch.nn as nn


class Corr(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        return self.proj(x)
'''

ENCDEC = '''
import torch
import torch.nn as nn


class Layer(nn.Module):
    def __init__(self, attention, d):
        super().__init__()
        self.attention = attention
        self.out = nn.Linear(d, d)

    def forward(self, x):
        return self.out(torch.relu(self.attention(x))) + x


class Encoder(nn.Module):
    def __init__(self, attn_layers):
        super().__init__()
        self.attn_layers = nn.ModuleList(attn_layers)

    def forward(self, x):
        for layer in self.attn_layers:
            x = layer(x)
        return x
'''

NET = '''
import torch.nn as nn
from layers.corr import Corr
from layers.encdec import Encoder, Layer


class Net(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.encoder = Encoder([Layer(Corr(d), d) for _ in range(2)])
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        return self.head(self.encoder(x))
'''


def _sweep():
    import mindport

    spec = importlib.util.spec_from_file_location(
        "sweep", Path(mindport.__file__).resolve().parents[1] / "benchmarks" / "discovery_sweep.py")
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    return sweep


def _repo(src: Path) -> None:
    (src / "layers").mkdir(parents=True)
    (src / "models").mkdir()
    (src / "layers" / "__init__.py").write_text("")
    (src / "models" / "__init__.py").write_text("")
    (src / "layers" / "corr.py").write_text(CORR)
    (src / "layers" / "encdec.py").write_text(ENCDEC)
    (src / "models" / "net.py").write_text(NET)


def test_conversion_plan_takes_the_model_files_users_and_their_imports(tmp_path):
    from mindport.discovery.scan import python_files

    sweep = _sweep()
    _repo(tmp_path)
    files = python_files(tmp_path)
    needed, over = sweep.conversion_plan(tmp_path, ["layers/encdec.py"], files, 150)
    assert not over
    assert needed == {"layers/__init__.py", "layers/encdec.py", "layers/corr.py", "models/__init__.py",
                      "models/net.py"}, needed
    # the users stay out when they would pass the cap; the model file's own closure is still converted
    needed, over = sweep.conversion_plan(tmp_path, ["layers/encdec.py"], files, 3)
    assert needed == {"layers/__init__.py", "layers/encdec.py"} and not over, needed


def test_encoder_built_from_its_users_call_is_proven_after_the_sweeps_conversion(tmp_path):
    """The sweep's own steps (plan, convert with the rest excluded, prove with stubs): the Encoder's constructor is
    the users' call, and its weights map because layers/corr.py is converted."""
    from pathlib import PurePath

    from mindport.discovery.prove import ProveSettings, prove_models
    from mindport.discovery.scan import python_files
    from mindport.migrator.repo import convert_path

    sweep = _sweep()
    src, out = tmp_path / "src", tmp_path / "out"
    _repo(src)
    files = python_files(src)
    needed, _ = sweep.conversion_plan(src, ["layers/encdec.py"], files, 150)
    exclude = tuple(f for f in files if f not in needed and not any(PurePath(n).match(f) for n in needed))
    convert_path(src, out, jobs=1, force=True, exclude=exclude)
    models, _ = prove_models(src, out, pattern="layers/encdec.py:Encoder", cache=False,
                             settings=ProveSettings(stub_missing=True))
    (m,) = models
    assert "Corr(" in m["ctor"] and "layers.corr" in m["ctor"], m["ctor"]  # the users' call, recorded
    assert m["status"] == "proven", m
    assert not m.get("stubbed"), m
    assert (out / "layers" / "corr.py").is_file()
