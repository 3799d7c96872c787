"""First contact on fresh repositories (session 28), discovery's construction, two classes:

1. A model built from a configuration dict the repository writes with some computed entries
   (AmazingDD/DeepFM-pytorch's main.py: ``args = {'gpuid': '0', ..., 'num_features': len(feat_cols)}`` then
   ``DeepFM(args)``): the call is no literal, so the dict's keys got small values by name, and ``'gpuid': 16`` met
   ``os.environ['CUDA_VISIBLE_DEVICES'] = args['gpuid']`` ("TypeError: str expected, not int"). The dict's literal
   entries are now the repository's defaults of those keys (``scan._dict_literal_entries``, after argparse's).
2. A model whose module uses a stand-in for a package this machine lacks (lucidrains/st-moe-pytorch: einx,
   colt5_attention): its not-built reason now names the packages (``build._stand_ins_of``); before, it read
   "Tensor type unknown to einops <class 'mindport.discovery.stubs._StubMeta'>".

3. A long reason or error keeps its cause (``prove.brief_reason``).
4. A time limit that fires inside an import no longer poisons the builder's later attempts (``build._Limited``).

The scan-level and text cases run in milliseconds; the other three share one repository proven once (real torch,
real MindSpore, through ``_prove.prove_files`` as ``migrate`` runs them), which keeps the file near a minute on one
idle core (the slow import sleeps 8 s once).
"""
from __future__ import annotations

import ast

import pytest

from mindport.discovery.scan import _dict_literal_entries

from _prove import prove_files


def test_dict_literal_entries_valid_and_invalid():
    tree = ast.parse(
        "cols = ['a', 'b']\n"
        "args = {'gpuid': '0', 'lr': 0.001, 'dense_size': [32, 32], 'num_features': len(cols),\n"
        "        '1o_dropout_p': 1.0, 'model': {'act': 'relu'}}\n"
        "cfg = dict(width=8, fn=print)\n"
        "table = {1: 'one'}\n"          # not string keys: no configuration
        "merged = {**args, 'extra': 2}\n"  # a ** entry: left out whole
        "call({'in_a_call': 3})\n"       # not bound to a name
    )
    got = _dict_literal_entries(tree)
    assert got == {"gpuid": "'0'", "lr": "0.001", "dense_size": "[32, 32]", "1o_dropout_p": "1.0", "act": "'relu'",
                   "width": "8"}


_DICT_MODEL = {
    "model.py": """
        import os
        import torch
        from torch import nn

        class FieldNet(nn.Module):
            def __init__(self, args):
                super().__init__()
                os.environ['CUDA_VISIBLE_DEVICES'] = args['gpuid']
                self.emb = nn.Embedding(sum(args['field_size']), args['embedding_dim'])
                if args['act'] == 'relu':
                    self.act = nn.ReLU()
                else:
                    raise ValueError('unknown activation')
                self.out = nn.Linear(args['num_features'] * args['embedding_dim'], 1)

            def forward(self, idxs):
                e = self.emb(idxs)
                return torch.sigmoid(self.out(self.act(e).reshape(e.shape[0], -1)))
        """,
    "main.py": """
        import pandas as pd
        from model import FieldNet

        data = pd.read_csv('./data.csv')
        fields = [data[c].nunique() for c in data.columns]
        args = {'gpuid': '0', 'embedding_dim': 4, 'act': 'relu', 'num_features': len(fields),
                'field_size': fields}
        model = FieldNet(args)
        """,
}


def test_model_from_a_partly_literal_config_dict_is_proven(proven):
    m = proven["model.py:FieldNet"]
    assert m["status"] == "proven", m.get("reason")
    assert "'gpuid': '0'" in m["ctor"]


_STUBBED_MODEL = {
    "layers.py": """
        import torch
        from torch import nn
        import not_installed_pkg28
        from other_missing_pkg28 import gate

        class Gated(nn.Module):
            def __init__(self, dim=8):
                super().__init__()
                self.proj = nn.Linear(dim, dim)

            def forward(self, x):
                return not_installed_pkg28.mix(self.proj(x), gate(x)) + x

        class Plain(nn.Module):
            def __init__(self, dim=8):
                super().__init__()
                self.proj = nn.Linear(dim, dim)

            def forward(self, x):
                return self.proj(x)
        """,
}


def test_not_built_reason_names_the_missing_packages(proven):
    m = proven["layers.py:Gated"]
    assert m["status"] == "not-built"
    assert m["reason"].endswith("(its module imports packages not installed here, given stand-ins: not_installed_pkg28, "
                                "other_missing_pkg28)"), m["reason"]
    assert m["stubbed"] == ["not_installed_pkg28", "other_missing_pkg28"]


def test_a_long_reason_keeps_its_cause():
    """3. The terminal printed a reason's first 200 characters and the report an error's first 400: the constructor
    call quoted before the cause filled them (DeepFM: the cause was never shown)."""
    from mindport.discovery.prove import brief_reason

    ctor = "args={" + ", ".join(f"'key_{i}': {i}" for i in range(30)) + "}"
    reason = (f"small values ({ctor}): TypeError: str expected, not int (at deepfm.py:13) | "
              f"small values ({ctor}): TypeError: str expected, not int (at deepfm.py:13)")
    short = brief_reason(reason, 200)
    assert len(short) <= 200 and short.startswith("small values (args={'key_0': 0")
    assert "): TypeError: str expected, not int (at deepfm.py:13) | (+1 more)" in short
    error = (f"building DeepFM({ctor}) from /tmp/x/deepfm.py failed at /tmp/x/deepfm.py:44: ValueError: For "
             "'Dropout', the 'p' must be a number in range [0, 1), but got 1.0.")
    short = brief_reason(error, 200)
    assert len(short) <= 200
    assert short.startswith("ValueError: For 'Dropout', the 'p' must be a number in range [0, 1), but got 1.0. "
                            "(at deepfm.py:44); building DeepFM(args=")
    assert brief_reason("TypeError: short", 200) == "TypeError: short"
    note = " (its module imports packages not installed here, given stand-ins: einx, colt5_attention)"
    short = brief_reason(reason + note, 200)
    assert len(short) <= 200 and short.endswith("(+1 more)" + note)


_SLOW_IMPORT = {
    # a package whose import outlasts record_call_sites' 5 s limit the first time (a busy machine importing
    # matplotlib.pyplot) and refuses to run twice over its own remains (matplotlib's docstring registry: "KeyError:
    # 'Collection:kwdoc'")
    "slowpkg/__init__.py": "",
    "slowpkg/state.py": "KEYS = {}\n",
    "slowpkg/heavy.py": """
        import os
        import time
        from slowpkg import state

        assert 'heavy' not in state.KEYS, 'slowpkg.heavy imported over its own remains'
        state.KEYS['heavy'] = 1
        _marker = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'imported_once')
        if not os.path.exists(_marker):
            open(_marker, 'w').close()
            time.sleep(8)
        """,
    "net.py": """
        import torch
        from torch import nn
        import slowpkg.heavy

        class SlowImportNet(nn.Module):
            def __init__(self, width=8):
                super().__init__()
                self.fc = nn.Linear(width, 4)

            def forward(self, x):
                return torch.tanh(self.fc(x))
        """,
}


def test_a_time_limit_inside_an_import_does_not_poison_later_builds(proven):
    """4. ayooshkathuria/pytorch-yolo-v3 on a machine at load 25: the recording pass's 5 s limit fired inside
    ``import matplotlib.pyplot``, and every later build of the process failed on the half-imported remains (7 of 7
    not built). The modules an interrupted attempt added are forgotten (``build._Limited``)."""
    m = proven["net.py:SlowImportNet"]
    assert m["status"] == "proven", m.get("reason")


@pytest.fixture(scope="module")
def proven(tmp_path_factory):
    """One repository holding the three cases, proven once (one builder process, one proof per model)."""
    files = {**_DICT_MODEL, **_STUBBED_MODEL, **_SLOW_IMPORT}
    return prove_files(tmp_path_factory.mktemp("fresh28"), files, "*.py:[FGS]*")


def test_a_file_name_parameter_gets_no_small_value():
    """5. ``Darknet(cfgfile)`` got ``cfgfile=16``: ``open(16)`` read and closed the builder's file descriptor 16
    ("OSError: [Errno 9] Bad file descriptor"). A file's name or path gets no guess; sizes and flags keep theirs."""
    from mindport.discovery.build import small_value

    for name in ("cfgfile", "config_path", "data_dir", "root_dir", "weights_file", "filename", "path", "url"):
        assert small_value(name, "", 16, last_resort=True) is None, name
        assert small_value(name, "str", 16, last_resort=True) is None, name
    assert small_value("bidir", "", 16, last_resort=True) == "16"  # a switch ending in "dir", not a folder
    assert small_value("n_files", "", 16, last_resort=True) == "16"
    assert small_value("in_features", "", 16, last_resort=True) == "16"
    assert small_value("checkpoint", "", 16, last_resort=True) == "16"  # often gradient checkpointing's switch


def test_upsample_rates_are_no_sample_rate():
    """6. HiFi-GAN's ``upsample_rates`` matched the sample-rate rule: ``[16000, 16000]`` (xcmyz/FastVocoder's
    mpd.Generator). A sample rate keeps its 16000; an upsampling factor is a small list again."""
    from mindport.discovery.build import small_value

    assert small_value("sample_rate", "") == "16000" and small_value("sampling_rate", "") == "16000"
    assert small_value("audio_sample_rate", "") == "16000" and small_value("sr", "") == "16000"
    assert small_value("upsample_rates", "", 16, last_resort=True) != "16000"
    assert small_value("upsample_rate", "", 16, last_resort=True) == "2"
