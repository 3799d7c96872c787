"""Fixes from disc47's first contact (issue 29, batch 17)."""
from __future__ import annotations

from _prove import prove_files

SECTION_CONFIG = {
    # DeNA/PyTorch_YOLOv3's shape: the model takes the MODEL section of a YAML file named .cfg (train.py:
    # ``cfg = yaml.load(open(args.cfg)); model = YOLOv3(cfg['MODEL'])``), reads one key itself and hands the section
    # to a module-level builder that gives it to the head, which reads the others
    "config/net_default.cfg": '''
        MODEL:
          TYPE: Small
          WIDTHS: [[4, 6], [8, 10]]
          MASK: [1, 0]
          N_CLASSES: 3
        TRAIN:
          LR: 0.001
    ''',
    "models/net.py": '''
        import torch
        import torch.nn as nn


        class Head(nn.Module):
            def __init__(self, config_model, layer_no, in_ch):
                super().__init__()
                strides = [32, 16]
                self.stride = strides[layer_no]
                width = config_model['WIDTHS'][config_model['MASK'][layer_no]][1]
                self.conv = nn.Conv2d(in_ch, width, 1)
                self.out = nn.Conv2d(width, config_model['N_CLASSES'], 1)

            def forward(self, x):
                return self.out(torch.relu(self.conv(x)))


        def create_modules(config_model):
            return nn.ModuleList([nn.Conv2d(3, 8, 3, padding=1), Head(config_model, layer_no=0, in_ch=8)])


        class Net(nn.Module):
            def __init__(self, config_model):
                super().__init__()
                if config_model['TYPE'] == 'Small':
                    self.module_list = create_modules(config_model)
                else:
                    raise Exception('Model name {} is not available'.format(config_model['TYPE']))

            def forward(self, x):
                for m in self.module_list:
                    x = m(x)
                return x
    ''',
}


def test_a_section_of_a_yaml_cfg_file_configures_the_model(tmp_path):
    """(DeNA/PyTorch_YOLOv3: YOLOv3 and YOLOLayer not built, "KeyError: 'ANCHORS'" with config_model={'TYPE':
    'YOLOv3'}.) The repository's configuration is a YAML file named .cfg and the class takes one section of it
    (``cfg['MODEL']``): the files that load as YAML mappings, .cfg too, and their sections are searched for the keys
    the class reads; a section serves whole, as the repository hands it (the model reads TYPE, its head the rest).
    The head takes the section with the literal arguments of the repository's call (``layer_no=0, in_ch=8``: a
    guessed ``layer_no`` of 16 indexes past its lists). Both build and are proven against torch."""
    models = prove_files(tmp_path, SECTION_CONFIG, "models/net.py:*")
    for name in ("models/net.py:Net", "models/net.py:Head"):
        assert models[name]["status"] == "proven", models[name]
        assert models[name]["ctor_source"].startswith("repository config config/net_default.cfg"), models[name]
    assert "'N_CLASSES': 3" in models["models/net.py:Net"]["ctor"], models["models/net.py:Net"]


NO_STATE_BUFFERS = {
    "layers.py": '''
        import torch
        import torch.nn as nn


        class _ModuleNoStateBuffers(nn.Module):
            """Extension of nn.Module that removes buffers from state_dict."""

            def state_dict(self, destination=None, prefix='', keep_vars=False):
                ret = super(_ModuleNoStateBuffers, self).state_dict(destination, prefix, keep_vars)
                for k in self._buffers:
                    del ret[prefix + k]
                return ret

            def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
                buffers = self._buffers  # hidden while loading: not restored
                self._buffers = {}
                result = super(_ModuleNoStateBuffers, self)._load_from_state_dict(state_dict, prefix, *args, **kwargs)
                self._buffers = buffers
                return result


        class ApplyFilterbank(_ModuleNoStateBuffers):
            def __init__(self, filterbank):
                super(ApplyFilterbank, self).__init__()
                self.register_buffer('filterbank', filterbank)

            def forward(self, mag_specgrams):
                return torch.matmul(mag_specgrams, self.filterbank)
    ''',
}


def test_persistent_buffers_a_state_dict_override_leaves_out_are_moved(tmp_path):
    """(keunwoochoi/torchaudio-contrib's ApplyFilterbank: ms-failed, "moving the weights failed: MindSpore parameters
    left unfilled: filterbank".) A module whose state_dict override drops its buffers still holds them, and its port
    keeps each persistent buffer as a frozen Parameter: the proof moves the module's buffers the state_dict left out,
    and the model is proven against torch."""
    models = prove_files(tmp_path, NO_STATE_BUFFERS, "layers.py:*")
    assert models["layers.py:ApplyFilterbank"]["status"] == "proven", models["layers.py:ApplyFilterbank"]


MATH_SCALAR = {
    "model.py": '''
        import math
        import numpy as np
        import torch
        import torch.nn as nn
        from torch.autograd import Variable


        class PositionalEncoder(nn.Module):
            def __init__(self, d_model):
                super().__init__()
                self.d_model = d_model

            def forward(self, x, t):
                x = x * math.sqrt(self.d_model)
                pe = np.zeros(self.d_model)
                for i in range(0, self.d_model, 2):
                    pe[i] = math.sin(t / (10000 ** ((2 * i) / self.d_model)))
                    pe[i + 1] = math.cos(t / (10000 ** ((2 * (i + 1)) / self.d_model)))
                return x + Variable(torch.Tensor(pe))
    ''',
}


def test_a_forward_argument_given_to_python_math_is_a_number(tmp_path):
    """(jiaxiang-cheng/PyTorch-Transformer-for-RUL-Prediction's PositionalEncoder: not built, every input "only one
    element tensors can be converted to Python scalars": ``t`` was given as a tensor of two ints.) A forward argument
    that Python's ``math`` takes, alone or in arithmetic, is a number; the model is proven against torch."""
    models = prove_files(tmp_path, MATH_SCALAR, "model.py:*")
    assert models["model.py:PositionalEncoder"]["status"] == "proven", models["model.py:PositionalEncoder"]
