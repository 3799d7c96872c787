"""A string's method called on a constructor argument or on an attribute of a namespace argument (disc56; batch 25's
thstkdgus35/EDSR-PyTorch: ``Loss(args, ckp)`` reads ``args.loss.split('+')``, ``Model`` ``args.model.lower()``, the
VGG loss ``conv_index.find('22') >= 0``). The class: a value a string's method is called on is a string. The
attribute was guessed a namespace holding that method (``SimpleNamespace(split=16)``: "'int' object is not
callable"), the argument one too (``SimpleNamespace(find=16)``): not built. Now an attribute takes the repository's
argparse default for an option of its name (``'1*L1'``), else a string; an argument the class searches
(``find``/``startswith``/``endswith``/``in``) takes the first string it looks for (the class's own first branch).
Real torch and MindSpore run by the proof."""
from __future__ import annotations

from tests.discovery._prove import prove_files

MODEL = '''
import torch
import torch.nn as nn


class MixedLoss(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.terms = []
        for term in args.loss.split('+'):
            weight, kind = term.split('*')
            self.terms.append((float(weight), kind))
        self.proj = nn.Linear(args.n_feats, args.n_feats)
        self.upper = args.model.lower() == 'edsr'
        self.tag = args.tag.strip().upper()

    def forward(self, sr, hr):
        total = 0
        for weight, kind in self.terms:
            diff = self.proj(sr) - hr
            total = total + weight * (diff.abs().mean() if kind == 'L1' else (diff ** 2).mean())
        return total * (2.0 if self.upper else 1.0) + len(self.tag)


class Features(nn.Module):
    def __init__(self, conv_index, width=8):
        super().__init__()
        if conv_index.find('22') >= 0:
            self.body = nn.Sequential(nn.Linear(width, width), nn.ReLU())
        elif conv_index.startswith('54'):
            self.body = nn.Sequential(nn.Linear(width, width), nn.Tanh(), nn.Linear(width, width))

    def forward(self, x):
        return self.body(x)
'''

OPTION = '''
import argparse

parser = argparse.ArgumentParser()
parser.add_argument('--loss', type=str, default='1*L1+2*MSE')
parser.add_argument('--model', default='EDSR')
parser.add_argument('--n_feats', type=int, default=8)
args = parser.parse_args()
'''


def test_scan_reads_string_attributes_and_searched_strings():
    import ast

    from mindport.discovery.scan import STR_KEY, _argparse_defaults, _choices, _params, _usage

    tree = ast.parse(MODEL)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def init(name):
        return next(n for n in classes[name].body if isinstance(n, ast.FunctionDef) and n.name == "__init__")

    loss = _params(init("MixedLoss").args, skip_first=True)
    _usage(classes["MixedLoss"], loss, _argparse_defaults(ast.parse(OPTION)))
    args = next(p for p in loss if p.name == "args")
    assert args.use == "namespace"
    assert args.attrs["loss"] == "'1*L1+2*MSE'" and args.attrs["model"] == "'EDSR'", args.attrs
    assert args.attrs["tag"] == STR_KEY, args.attrs  # no option of that name: a string all the same
    features = _params(init("Features").args, skip_first=True)
    _choices(init("Features"), features)
    _usage(classes["Features"], features, {})
    conv_index = next(p for p in features if p.name == "conv_index")
    assert conv_index.choices[:2] == ["22", "54"] and conv_index.use == "str", (conv_index.choices, conv_index.use)


def test_models_reading_string_methods_are_built_and_proven(tmp_path):
    proven = prove_files(tmp_path, {"loss56.py": MODEL, "option56.py": OPTION}, "loss56.py:*")
    loss, features = proven["loss56.py:MixedLoss"], proven["loss56.py:Features"]
    assert loss["status"] == "proven", loss
    assert "loss='1*L1+2*MSE'" in loss["ctor"] and "model='EDSR'" in loss["ctor"] and "tag='tag'" in loss["ctor"], loss
    assert features["status"] == "proven", features
    assert "'22'" in features["ctor"], features
