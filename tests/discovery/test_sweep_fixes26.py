"""Fixes from disc26's first contact with manifest rows 195 onwards (issue 29)."""
from __future__ import annotations

from _prove import prove_files


_prove = prove_files  # tests/discovery/_prove.py


OPTIONAL_KEYS = {
    # a configuration library this machine lacks (ml_collections), its trees built by functions (jeonsworld/
    # ViT-pytorch's models/configs.py): one configuration has patches.size, another patches.grid (``del ... .size``)
    "models/__init__.py": "",
    "models/configs.py": '''
        import ml_collections


        def get_small_config():
            config = ml_collections.ConfigDict()
            config.patches = ml_collections.ConfigDict({'size': (4, 4)})
            config.hidden_size = 12
            config.dropout_rate = 0.0
            return config


        def get_hybrid_config():
            config = get_small_config()
            del config.patches.size
            config.patches.grid = (2, 2)
            config.resnet = ml_collections.ConfigDict()
            config.resnet.width_factor = 1
            return config
    ''',
    # the model reads patches.grid through .get and only then by key, else patches.size: alternatives, so a
    # configuration holding either serves (before: every key read was required, "grid" and "get" among them)
    "models/modeling.py": '''
        import torch
        import torch.nn as nn

        import models.configs as configs


        class Embeddings(nn.Module):
            def __init__(self, config, img_size=16, in_channels=3):
                super().__init__()
                if config.patches.get("grid") is not None:
                    grid = config.patches["grid"]
                    patch = (img_size // grid[0], img_size // grid[1])
                else:
                    patch = config.patches["size"]
                n_patches = (img_size // patch[0]) * (img_size // patch[1])
                self.proj = nn.Conv2d(in_channels, config.hidden_size, kernel_size=patch, stride=patch)
                self.position = nn.Parameter(torch.randn(1, n_patches, config.hidden_size) * 0.02)
                self.dropout = nn.Dropout(config.dropout_rate)

            def forward(self, x):
                x = self.proj(x).flatten(2).transpose(-1, -2)
                return self.dropout(x + self.position)


        CONFIGS = {"small": configs.get_small_config(), "hybrid": configs.get_hybrid_config()}
    ''',
}


def test_keys_read_with_get_are_optional_in_a_configuration(tmp_path):
    """ViT-pytorch's Embeddings/Transformer (first contact: not built, no configuration held "get", "grid" and
    "size" together): a key read through ``.get`` on a mapping inside the configuration is optional, the method name
    is no key; the model builds from a configuration function and is proven against torch."""
    result = _prove(tmp_path, OPTIONAL_KEYS, "models/modeling.py:*")["models/modeling.py:Embeddings"]
    assert result["status"] == "proven", result
    assert result["ctor_source"].startswith("repository config models/configs.py"), result


BUILDER_OBJECTS = {
    # a module whose methods build layers, handed to every model (DingXiaoH/ACNet's builder.py: ConvBuilder)
    "builder.py": '''
        import torch.nn as nn


        class ConvBuilder(nn.Module):
            def __init__(self, base_config):
                super().__init__()
                self.base_config = base_config
                self.eps = 1e-5

            def Conv2dBN(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
                se = nn.Sequential()
                se.add_module("conv", nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=False))
                se.add_module("bn", nn.BatchNorm2d(out_channels, eps=self.eps))
                return se

            def Conv2dBNReLU(self, in_channels, out_channels, kernel_size, stride=1, padding=0):
                se = self.Conv2dBN(in_channels, out_channels, kernel_size, stride, padding)
                se.add_module("relu", nn.ReLU())
                return se

            def Linear(self, in_features, out_features):
                return nn.Linear(in_features, out_features)


        class DeeperBuilder(ConvBuilder):  # a subclass: its base's methods are its own
            def ReLU(self):
                return nn.ReLU()
    ''',
    "models.py": '''
        import torch.nn as nn

        from builder import ConvBuilder


        class SmallNet(nn.Module):
            def __init__(self, builder: ConvBuilder, num_classes):
                super().__init__()
                self.stem = builder.Conv2dBNReLU(3, 8, 3, padding=1)
                self.body = builder.Conv2dBN(8, 8, 3, stride=2, padding=1)
                self.pool = nn.AdaptiveAvgPool2d(1)
                self.fc = builder.Linear(8, num_classes)

            def forward(self, x):
                return self.fc(self.pool(self.body(self.stem(x))).flatten(1))


        class Residual(nn.Module):
            def __init__(self, planes, builder=None):  # no annotation, a None default (ACNet's RCBlock)
                super().__init__()
                self.conv = builder.Conv2dBN(planes, planes, 3, padding=1)

            def forward(self, x):
                return x + self.conv(x)
    ''',
}


def test_an_object_whose_methods_build_layers_is_built_with_its_own_constructor(tmp_path):
    """DingXiaoH/ACNet (first contact: "a guessed number where an object was needed", and RCBlock with builder=None):
    a parameter the class reads only for methods of a project class (``builder.Conv2dBN(...)``) is that class's
    object, built with its own constructor and None for its required arguments (``ConvBuilder(None)``); the
    annotation's class first. Both models are proven against torch."""
    models = _prove(tmp_path, BUILDER_OBJECTS, "models.py:*")
    for name in ("models.py:SmallNet", "models.py:Residual"):
        assert models[name]["status"] == "proven", models[name]
        assert "ConvBuilder(None)" in models[name]["ctor"], models[name]["ctor"]


NAMEDTUPLE_RECORDS = {
    # quark0/darts: the searched architectures are records of a namedtuple, in a module the model's file never
    # imports (train.py picks one by name: ``eval("genotypes.%s" % args.arch)``)
    "cnn/genotypes.py": '''
        from collections import namedtuple

        Genotype = namedtuple('Genotype', 'normal normal_concat reduce reduce_concat')

        PRIMITIVES = ['max_pool_3x3', 'avg_pool_3x3', 'conv_3x3']

        SMALL = Genotype(
            normal=[('conv_3x3', 0), ('avg_pool_3x3', 1), ('conv_3x3', 1), ('max_pool_3x3', 2)],
            normal_concat=[2, 3],
            reduce=[('max_pool_3x3', 0), ('conv_3x3', 1), ('avg_pool_3x3', 2), ('conv_3x3', 0)],
            reduce_concat=[2, 3],
        )
        COMPUTED = Genotype(normal=[('conv_3x3', 0)], normal_concat=range(2, 3), reduce=[], reduce_concat=[2])
    ''',
    "cnn/model.py": '''
        import torch
        import torch.nn as nn

        OPS = {
            'max_pool_3x3': lambda C: nn.MaxPool2d(3, stride=1, padding=1),
            'avg_pool_3x3': lambda C: nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False),
            'conv_3x3': lambda C: nn.Sequential(nn.ReLU(), nn.Conv2d(C, C, 3, padding=1, bias=False),
                                                nn.BatchNorm2d(C)),
        }


        class Cell(nn.Module):
            def __init__(self, genotype, C, reduction):
                super().__init__()
                if reduction:
                    op_names, indices = zip(*genotype.reduce)
                    concat = genotype.reduce_concat
                else:
                    op_names, indices = zip(*genotype.normal)
                    concat = genotype.normal_concat
                self._ops = nn.ModuleList([OPS[name](C) for name in op_names])
                self._indices = indices
                self._concat = concat

            def forward(self, s0, s1):
                states = [s0, s1]
                for i in range(len(self._ops) // 2):
                    h1 = self._ops[2 * i](states[self._indices[2 * i]])
                    h2 = self._ops[2 * i + 1](states[self._indices[2 * i + 1]])
                    states.append(h1 + h2)
                return torch.cat([states[i] for i in self._concat], dim=1)
    ''',
}


def test_a_namedtuple_record_of_the_repository_is_a_configuration(tmp_path):
    """quark0/darts' Cell/NetworkCIFAR (first contact: a namespace of numbers for ``genotype``, "zip() argument after
    * must be an iterable, not int"): a module-level record of a namedtuple the repository defines, its fields
    literals, is a repository configuration; the model gets the fields it reads and is proven against torch. A
    record with a computed field (``range(2, 3)``) is left out."""
    cell = _prove(tmp_path, NAMEDTUPLE_RECORDS, "cnn/model.py:*")["cnn/model.py:Cell"]
    assert cell["status"] == "proven", cell
    assert cell["ctor_source"].startswith("repository config cnn/genotypes.py"), cell
    from mindport.discovery.build import _namedtuple_records

    records = _namedtuple_records((tmp_path / "src/cnn/genotypes.py").read_text(), "cnn/genotypes.py")
    assert [r[2]["normal_concat"] for r in records] == [[2, 3]]


KEPT_OPTION = {
    "layers.py": '''
        import torch.nn as nn


        class PoolingLayer(nn.Module):
            def __init__(self, in_channels, pool_type, kernel_size=3):
                super().__init__()
                self.pool_type = pool_type  # kept, then compared as self.pool_type
                self.proj = nn.Conv2d(in_channels, in_channels, 1)
                if self.pool_type == 'avg':
                    self.pool = nn.AvgPool2d(kernel_size, stride=1, padding=1, count_include_pad=False)
                elif self.pool_type == 'max':
                    self.pool = nn.MaxPool2d(kernel_size, stride=1, padding=1)
                else:
                    raise NotImplementedError

            def forward(self, x):
                return self.pool(self.proj(x))
    ''',
}


def test_an_option_kept_on_self_then_compared_takes_its_strings(tmp_path):
    """mit-han-lab/proxylessnas' PoolingLayer (first contact: pool_type=16, NotImplementedError): an option the
    constructor keeps (``self.pool_type = pool_type``) and compares as ``self.pool_type == 'avg'`` takes the strings
    it is compared with, as a direct comparison does; proven against torch."""
    layer = _prove(tmp_path, KEPT_OPTION, "layers.py:*")["layers.py:PoolingLayer"]
    assert layer["status"] == "proven", layer
    assert "pool_type='avg'" in layer["ctor"], layer["ctor"]
