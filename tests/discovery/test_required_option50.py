"""A required argparse option with no default read into a model (fix50; yjn870/IDN-pytorch: ``parser.add_argument(
'--scale', type=int, required=True)``, ``IDN(args)`` handing ``args.scale`` to ConvTranspose2d's stride with
``output_padding=1``). The class: an option the script requires has a value in every real run, of its ``type``
(or one of its ``choices``); the namespace key was guessed by its name (``scale`` -> 1.0, a float stride torch
refuses: the model was never built). It now gets its first choice, 2 for ``type=int``, 0.5 for ``type=float``, a
list of it for ``nargs``. Real torch and MindSpore run by the proof."""
from __future__ import annotations

import ast

from tests.discovery._prove import prove_files

MODEL = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Upsampler(nn.Module):
    def __init__(self, opts):
        super().__init__()
        self.scale = opts.scale
        self.head = nn.Conv2d(3, opts.width, 3, padding=1)
        self.up = nn.ConvTranspose2d(opts.width, 3, kernel_size=4, stride=self.scale, padding=1,
                                     output_padding=self.scale - 2)
        self.gain = opts.gain
        self.act = opts.act

    def forward(self, x):
        y = self.up(F.relu(self.head(x)))
        base = F.interpolate(x, scale_factor=self.scale, mode='nearest')
        y = torch.tanh(y) if self.act == 'tanh' else torch.sigmoid(y)
        return base + self.gain * y
'''

SCRIPT = '''
import argparse

from upsampler50 import Upsampler

if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--scale', type=int, required=True)
    parser.add_argument('--width', type=int, default=8)
    parser.add_argument('--gain', type=float, required=True)
    parser.add_argument('--act', choices=['tanh', 'sigmoid'], required=True)
    parser.add_argument('--sizes', type=int, nargs='+', required=True)
    parser.add_argument('--out', required=True)
    parser.add_argument('--seed', type=int)
    opts = parser.parse_args()
    model = Upsampler(opts)
'''


def test_a_required_option_gets_a_value_of_its_type():
    from mindport.discovery.scan import _argparse_defaults

    defaults = _argparse_defaults(ast.parse(SCRIPT))
    assert defaults == {"scale": "2", "width": "8", "gain": "0.5", "act": "'tanh'", "sizes": "[2]"}, defaults


def test_a_model_reading_a_required_int_option_into_a_stride_is_built_and_proven(tmp_path):
    proven = prove_files(tmp_path, {"upsampler50.py": MODEL, "train50.py": SCRIPT}, "upsampler50.py:*")
    model = proven["upsampler50.py:Upsampler"]
    assert model["status"] == "proven", model
    assert "scale=2," in model["ctor"] and "gain=0.5" in model["ctor"] and "act='tanh'" in model["ctor"], model
