"""Fixes from disc25's first contact with manifest rows 184 onwards (issue 29)."""
from __future__ import annotations

from _prove import prove_files


_prove = prove_files  # tests/discovery/_prove.py


YACS_DEFAULTS = {
    # yacs-style defaults written in Python (hysts/pytorch_image_classification's config/defaults.py, HRNet's and
    # Swin's/FocalNet's config/default.py): a tree of nodes set attribute by attribute at module level
    "lib/config/__init__.py": "from .default import _C as cfg\n",
    "lib/config/default.py": '''
        class CN(dict):
            """A stand-in of yacs' CfgNode (the repository's own class; never imported by the builder)."""

            def __init__(self, init=None, new_allowed=False):
                super().__init__(init or {})

            def __getattr__(self, name):
                return self[name]

            def __setattr__(self, name, value):
                self[name] = value


        _C = CN()
        _C.OUTPUT_DIR = 'output'
        _C.DATASET = CN()
        _C.DATASET.CHANNELS = 3  # input channels
        _C.DATASET.ROOT = ''
        _C.MODEL = CN()
        _C.MODEL.NAME = 'pose_net'
        _C.MODEL.NUM_JOINTS = 5
        _C.MODEL.EXTRA = CN(new_allowed=True)
        _C.MODEL.EXTRA.WIDTHS = [24, 12]
        _C.MODEL.EXTRA.KERNEL = 3
        _C.MODEL.EXTRA.WITH_BIAS = False
        _C.MODEL.INIT_WEIGHTS = True
        _C.TRAIN = CN()
        _C.TRAIN.LR = 0.001
        _C.TRAIN.LR_STEP = [90, 110]
        _C.TRAIN.GPUS = computed_elsewhere()  # not a literal: left out
    ''',
    # an experiment's YAML file holds only what it changes (yacs' merge_from_file puts it over the defaults)
    "experiments/pose_net/wide.yaml": '''
        MODEL:
          NAME: pose_net
          EXTRA:
            WIDTHS: [32, 16]
    ''',
    "lib/models/pose_net.py": '''
        import torch.nn as nn


        class PoseNet(nn.Module):
            def __init__(self, cfg):
                super().__init__()
                extra = cfg.MODEL.EXTRA
                layers, planes = [], cfg.DATASET.CHANNELS
                for width in extra.WIDTHS:
                    layers += [nn.Conv2d(planes, width, extra.KERNEL, padding=extra.KERNEL // 2,
                                         bias=extra.WITH_BIAS), nn.BatchNorm2d(width), nn.ReLU()]
                    planes = width
                self.body = nn.Sequential(*layers)
                self.final = nn.Conv2d(planes, cfg.MODEL.NUM_JOINTS, 1)

            def forward(self, x):
                return self.final(self.body(x))


        class Head(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.proj = nn.Linear(config.MODEL.EXTRA.KERNEL * 4, config.MODEL.NUM_JOINTS)

            def forward(self, x):
                return self.proj(x).softmax(-1)
    ''',
}


def test_yacs_defaults_written_in_python_configure_the_model(tmp_path):
    """(disc25, rows 184+: hysts/pytorch_image_classification's ``Network(config)`` reads
    ``config.model.resnet.depth``; HRNet/FocalNet alike) The configuration's defaults are a tree set attribute by
    attribute in ``config/default.py`` (``_C.MODEL.EXTRA.WIDTHS = [24, 12]``); a YAML file of the experiments holds
    only what it changes. Before, only YAML files holding every key read were candidates: none did, and the guess
    ``cfg=16`` failed ("'int' object has no attribute 'MODEL'"). The Python tree is now read as text (never
    imported; a computed value is left out), alone and under each YAML file as yacs' merge_from_file does: PoseNet
    builds from the experiment over the defaults (widths 32, 16; channels 3 from the defaults), Head from the
    defaults alone, both proven against torch."""
    models = _prove(tmp_path, YACS_DEFAULTS, "lib/models/pose_net.py:*")
    pose = models["lib/models/pose_net.py:PoseNet"]
    assert pose["status"] == "proven", pose
    assert pose["ctor_source"].startswith("repository config experiments/pose_net/wide.yaml"), pose
    assert "'WIDTHS': [32, 16]" in pose["ctor"] and "'CHANNELS': 3" in pose["ctor"], pose["ctor"]
    head = models["lib/models/pose_net.py:Head"]
    assert head["status"] == "proven", head
    assert "'KERNEL': 3" in head["ctor"], head["ctor"]


def test_a_python_configuration_tree_is_read_as_text_never_run(tmp_path):
    """The tree's reader: literals kept, nodes nested, computed values and other names left out, nothing imported
    (the file calls a function that does not exist)."""
    from mindport.discovery.build import python_config_trees

    path = tmp_path / "lib" / "config" / "default.py"
    path.parent.mkdir(parents=True)
    path.write_text(__import__("textwrap").dedent(YACS_DEFAULTS["lib/config/default.py"]), encoding="utf-8")
    (tmp_path / "lib" / "util.py").write_text("x = dict()\nx.a = 1\ny = 2\n", encoding="utf-8")  # too few sets
    [(rel, _, tree)] = python_config_trees(str(tmp_path))
    assert rel == "lib/config/default.py"
    assert tree["MODEL"]["EXTRA"] == {"WIDTHS": [24, 12], "KERNEL": 3, "WITH_BIAS": False}
    assert tree["TRAIN"] == {"LR": 0.001, "LR_STEP": [90, 110]}
    assert tree["OUTPUT_DIR"] == "output"


CONFIG_FUNCTIONS = {
    # ViT-pytorch's models/configs.py: configurations built by functions with a configuration library this machine
    # lacks (ml_collections), called at import by the model's module
    "models/configs.py": '''
        import ml_collections


        def get_b16_config():
            config = ml_collections.ConfigDict()
            config.patches = ml_collections.ConfigDict({'size': (4, 4)})
            config.hidden_size = 24
            config.transformer = ml_collections.ConfigDict()
            config.transformer.mlp_dim = 48
            config.transformer.num_heads = 4
            config.transformer.dropout_rate = 0.1
            config.classifier = 'token'
            return config


        def get_r50_b16_config():
            config = get_b16_config()
            del config.patches.size
            config.patches.grid = (2, 2)
            config.resnet = ml_collections.ConfigDict()
            config.resnet.width_factor = 1
            return config
    ''',
    "models/modeling.py": '''
        import torch
        import torch.nn as nn

        import models.configs as configs


        class Attention(nn.Module):
            def __init__(self, config, vis):
                super().__init__()
                self.heads = config.transformer["num_heads"]
                self.head_size = config.hidden_size // self.heads
                self.qkv = nn.Linear(config.hidden_size, 3 * config.hidden_size)
                self.out = nn.Linear(config.hidden_size, config.hidden_size)
                self.drop = nn.Dropout(config.transformer["dropout_rate"])

            def forward(self, x):
                b, n, _ = x.shape
                q, k, v = self.qkv(x).view(b, n, 3, self.heads, self.head_size).permute(2, 0, 3, 1, 4)
                att = self.drop((q @ k.transpose(-1, -2) / self.head_size ** 0.5).softmax(-1))
                return self.out((att @ v).transpose(1, 2).reshape(b, n, -1))


        CONFIGS = {'ViT-B_16': configs.get_b16_config(), 'R50-ViT-B_16': configs.get_r50_b16_config()}
    ''',
}


def test_configurations_built_by_functions_with_a_missing_configuration_library(tmp_path):
    """(disc25, jeonsworld/ViT-pytorch) The model's module calls ``configs.get_b16_config()`` at import, which
    builds an ``ml_collections.ConfigDict`` tree; ml_collections is not installed. Before: its stand-in class was
    an empty stub ("'ConfigDict' object has no attribute 'size'"), the module did not import and no model built
    (4 of 5 not built there). A configuration library's dictionary (ml_collections, easydict, yacs, addict, munch
    ..., ``stubs.ATTRIBUTE_DICTS``) is now a dict whose keys are attributes (still reported as stubbed), and a tree
    a function builds and returns is a repository configuration (a ``del`` of a key honoured; a function that
    starts from another's tree starts from it): Attention builds from get_b16_config's tree, proven."""
    models = _prove(tmp_path, CONFIG_FUNCTIONS, "models/modeling.py:*")
    att = models["models/modeling.py:Attention"]
    assert att["status"] == "proven", att
    assert att["ctor_source"].startswith("repository config models/configs.py"), att
    assert "'num_heads': 4" in att["ctor"] and "'hidden_size': 24" in att["ctor"], att["ctor"]


def test_a_configuration_library_stand_in_is_an_attribute_dict():
    from mindport.discovery.build import _config_trees  # noqa: F401 - the reader the test above goes through
    from mindport.discovery.stubs import ATTRIBUTE_DICTS, AttributeDict

    assert "ConfigDict" in ATTRIBUTE_DICTS["ml_collections"] and "EasyDict" in ATTRIBUTE_DICTS["easydict"]
    c = AttributeDict({"patches": {"size": (16, 16)}}, new_allowed=True, hidden=3)
    c.transformer = {"heads": [{"k": 1}]}
    assert c.patches.size == (16, 16) and c["hidden"] == 3 and "new_allowed" not in c
    assert c.transformer.heads[0].k == 1 and c.patches.get("grid") is None
    del c.patches.size
    assert c.clone() == {"patches": {}, "hidden": 3, "transformer": {"heads": [{"k": 1}]}}


PATCHED_IMAGE = '''
import torch
import torch.nn as nn


class ViT(nn.Module):
    """omihub777/ViT-CIFAR's ViT: the image is unfolded into patch vectors before the first Linear, whose width is
    a patch's flattened length (img_size // patch) ** 2 * 3; the tokens' count is fixed by the positions."""

    def __init__(self, in_c: int = 3, num_classes: int = 10, img_size: int = 16, patch: int = 4, hidden: int = 24):
        super().__init__()
        self.patch = patch
        self.patch_size = img_size // patch
        self.emb = nn.Linear(self.patch_size ** 2 * in_c, hidden)
        self.pos_emb = nn.Parameter(torch.randn(1, patch ** 2, hidden))
        self.fc = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, num_classes))

    def forward(self, x):
        out = x.unfold(2, self.patch_size, self.patch_size).unfold(3, self.patch_size, self.patch_size)
        out = out.permute(0, 2, 3, 4, 5, 1).reshape(x.size(0), self.patch ** 2, -1)
        out = self.emb(out) + self.pos_emb
        return self.fc(out.mean(1))
'''


def test_the_image_the_constructor_was_told_of_is_an_input(tmp_path):
    """(disc25, omihub777/ViT-CIFAR: ViT and DepthwiseViT built, "no input ran") The first layer is a Linear over a
    patch's flattened length: its forms (2x48, 2x8x48) are no image, the rank hint gave 16 channels. The image of
    the size and channels the constructor was given (``img_size``, ``in_c``; the call's values, else the
    defaults) is now tried after the first layer's forms: 2x3x16x16, proven against torch."""
    models = _prove(tmp_path, {"vit.py": PATCHED_IMAGE}, "vit.py:*")
    vit = models["vit.py:ViT"]
    assert vit["status"] == "proven", vit
    assert vit["inputs"] == ["2x3x16x16:float32"], vit

    from mindport.discovery.build import constructor_images

    params = [{"name": "in_chans", "default": "3", "kind": "keyword"},
              {"name": "image_size", "default": "224", "kind": "keyword"}]
    assert constructor_images(params, "1, image_size=(16, 24)") == [["2x1x16x24:float32"]]
    assert constructor_images(params[:1], "") == []  # no size told: nothing


SIZE_CHECKED = '''
import torch.nn as nn
import torch.nn.functional as F


class Inception(nn.Module):
    """moskomule/senet.pytorch's SEInception3: ``_, _, h, w = x.size()``, then ``if (h, w) != (299, 299): raise``."""

    def __init__(self, num_classes):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2)
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        _, _, h, w = x.size()
        if (h, w) != (36, 20):
            raise ValueError("input size must be (36, 20)")
        return self.fc(F.adaptive_avg_pool2d(F.relu(self.conv(x)), 1).flatten(1))


class Unpacked(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 4)

    def forward(self, x):
        b, n, d = x.shape
        assert n == 5 and d == 6, "five tokens of six features"
        return self.proj(x).softmax(-1)
'''


def test_sizes_a_forward_checks_through_unpacked_axes(tmp_path):
    """(disc25, moskomule/senet.pytorch's SEInception3: "input size must be (299, 299)" for every input tried) The
    forward unpacks the axes into names and compares them, as a tuple, with the sizes it takes. The sizes asserted
    or raised on (disc20: ``assert x.size(1) == 2``) now include axes unpacked into names (``_, _, h, w =
    x.size()``, ``b, n, d = x.shape``) and tuples compared item by item: both proven at those sizes."""
    models = _prove(tmp_path, {"checked.py": SIZE_CHECKED}, "checked.py:*")
    inc = models["checked.py:Inception"]
    assert inc["status"] == "proven", inc
    assert inc["inputs"][0].split(":")[0].endswith("x36x20"), inc
    unp = models["checked.py:Unpacked"]
    assert unp["status"] == "proven", unp
    assert unp["inputs"][0].split(":")[0].endswith("x5x6"), unp


LAYER_CLASSES = '''
import torch.nn as nn


class Block(nn.Module):
    """A block handed its layer classes (LeViT's Attention(activation=nn.Hardswish), octconv's Bottleneck(norm_layer=
    nn.BatchNorm2d)): the repository's call passes torch layer classes as values."""

    def __init__(self, dim, norm_layer, activation):
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, padding=1)
        self.norm = norm_layer(dim)
        self.act = activation()

    def forward(self, x):
        return self.act(self.norm(self.conv(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.block = Block(8, norm_layer=nn.BatchNorm2d, activation=nn.Hardswish)

    def forward(self, x):
        return self.block(self.stem(x))
'''


def test_torch_layer_classes_in_a_constructor_call_are_the_conversions(tmp_path):
    """(disc25, xmu-xiaoma666/External-Attention-pytorch's LeViT Residual, d-li14/octconv.pytorch's Bottleneck: both
    built in torch, then "building the MindSpore Cell failed: name 'TorchHardswish' / 'TorchBatchNorm2d' is not
    defined") The constructor call, converted for the MindSpore side, hands the layer classes as the classes the
    conversion writes (``TorchBatchNorm2d``: torch's arguments, MindSpore's layer); their definitions were dropped
    and only the call kept. The whole converted call now runs in a copy of the model module's namespace: Block
    built from the repository's call, proven against torch."""
    models = _prove(tmp_path, {"blocks.py": LAYER_CLASSES}, "blocks.py:*")
    block = models["blocks.py:Block"]
    assert block["status"] == "proven", block
    assert "nn.BatchNorm2d" in block["ctor"] and "nn.Hardswish" in block["ctor"], block["ctor"]


def test_a_width_multiplier_is_small_in_a_configuration_at_small_widths():
    """(disc25, hysts/pytorch_image_classification's WRN: configs/cifar/wrn.yaml over the defaults gives
    widening_factor 10, 36.5 M parameters at both sizes) A configuration's width multiplier is 2 at small widths
    (as the builder's guess for a ``widen_factor`` parameter); counts and small values kept."""
    from mindport.discovery.build import _shrunk_config

    wrn = {"model": {"wrn": {"depth": 28, "initial_channels": 16, "widening_factor": 10, "drop_rate": 0.0},
                     "mobilenet": {"width_mult": 1, "channel_multiplier": 4}}}
    assert _shrunk_config(wrn) == {"model": {"wrn": {"depth": 28, "initial_channels": 16, "widening_factor": 2,
                                                     "drop_rate": 0.0},
                                             "mobilenet": {"width_mult": 1, "channel_multiplier": 2}}}
