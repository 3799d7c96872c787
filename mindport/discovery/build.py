"""Construction and inputs, tried in torch: one process per repository builds every candidate in turn
(``python -m mindport.discovery.build REQUEST.json RESULT.jsonl``), under a memory limit (``resource.setrlimit``)
for the whole process, a time limit per candidate (``SIGALRM``), and no network (sockets refuse to connect).

Constructor arguments, in this order: the user's (``mindport.toml``), the calls the repository writes (scan.py), the
class's own defaults, then small values for the remaining required sizes chosen by the parameter's name and type
hint. Inputs, in this order: the calls the repository writes, then the first layer the input meets (Conv1d/2d/3d,
Linear, Embedding -> integer tokens in range, RNN/LSTM/GRU with or without ``batch_first``, norms). An input is kept
when the model in eval mode gives the same, finite output twice.
"""
from __future__ import annotations

import itertools
import json
import os
import re
import signal
import sys
import time
import types

MAX_PARAMS = 100_000_000  # bigger models are not built: parity on CPU would take minutes each (ViT-B/16's 86 M,
# AlexNet's 61 M and ResNet-152's 60 M are in; VGG-16's 138 M is not)
MAX_ELEMENTS = 3_000_000  # of one input

_INT_HINTS = [  # (name pattern, value) for required int-like parameters without default
    # a position among its siblings (scale_idx, layer_idx, stage_index, block_id): the first one. A size there
    # indexes past a table (WIDTHS[stage_idx]) or never meets the last level of a recursion (chrischute/real-nvp's
    # _RealNVP(scale_idx, num_scales, ...) stops at scale_idx == num_scales - 1: 16 and 16 recursed to the time limit)
    (r"(^|_)(idx|index|id)$|^i$", 0),
    (r"(^|_)(num_)?classes$|n_classes|num_labels|num_outputs|n_out$|output_size|out_dim$", 10),
    (r"vocab|num_tokens|n_tokens|ntoken|num_embeddings", 100),
    (r"head", 2),
    (r"experts?$", 2),  # a mixture's experts (the width is split among them: hidden_size // n_experts channels)
    (r"(depth|layers?|blocks?|n_layer|num_layers|nlayers|scales|levels|stages)$", 2),
    (r"kernel|ksize|k$", 3),
    (r"stride|dilation|groups|scale_factor|upscale|ratio", 1),
    # a multiplier of the model's widths or depths (WideResNet's widen_factor, wfactor; width_mult; channel_multiplier;
    # a block's expansion): a few times, not a size (wfactor=16 made a 43.8 M-parameter WideResNet, over the cap)
    (r"factor$|mult$|multiplier$|^widen|expansion$", 2),
    (r"(seq|max_len|block_size|context|length|n_ctx|max_seq)", 16),
    (r"(img|image|input)_?size|resolution", 32),  # (a patch_size: 4, below: 32 left no patch of a 16 x 16 image)
    (r"patch", 4),
    (r"(ch|chan|channels|planes|features|dim|size|width|hidden|embed|emb|d_model|units|filters|c)(_\w+)?$|^(in|out|c)_|"
     r"(^|_)(in|out|inp|oup|mid|hid)\w*$|^n_|^num_", 16),
]


_MODULE_ARGS = r"^(fn|func|module|net|layer|sublayer|submodule|model|backbone|encoder|decoder|body|inner|wrapped)$"
# a sub-module argument: returns its first argument, takes any others (evaluated in the model's module, whatever it
# imports; the MindSpore side gets passthrough_ms's: prove.ms_ctor)
_IDENTITY = "__import__('mindport.discovery.passthrough_torch', fromlist=['Passthrough']).Passthrough()"
_MS_IDENTITY = "__import__('mindport.discovery.passthrough_ms', fromlist=['Passthrough']).Passthrough()"
# a required activation argument of no use the class shows (handed on to a function that calls it): tanh, a class and
# a function alike (passthrough_torch.Activation)
_ACTIVATION_ARGS = r"^(\w+_)?(activation|act|act_fn|act_func|activation_fn|nonlinearity|non_linearity|gate)$"
_ACTIVATION = "__import__('mindport.discovery.passthrough_torch', fromlist=['Activation']).Activation()"
_MS_ACTIVATION = "__import__('mindport.discovery.passthrough_ms', fromlist=['Activation']).Activation()"
# a tensor argument (pretrained embeddings): the same deterministic values on both sides (passthrough_*.table)
_TABLE = "__import__('mindport.discovery.passthrough_torch', fromlist=['table']).table"
_MS_TABLE = "__import__('mindport.discovery.passthrough_ms', fromlist=['table']).table"


_PATH_NAMES = r"(^|_)(filename|fname|filepath|dir|folder|url)$|file$|path$"

_TENSOR_ANNOTATION = r"(torch\.)?(Tensor|FloatTensor|LongTensor|IntTensor|DoubleTensor)"

_PLURAL_SIZES = r"(^|_)(dims|sizes|channels_list|hidden_dims|layers|blocks|num_blocks|depths|strides|units|filters)$"


_LAYER_FLAGS = {"batch_first": "True", "bidirectional": "True", "bias": "True", "affine": "True",
                "track_running_stats": "True", "inplace": "False", "align_corners": "False", "ceil_mode": "False",
                "count_include_pad": "True", "return_indices": "False", "elementwise_affine": "True",
                "residual": "True", "use_bias": "True"}


def small_value(name: str, annotation: str, default_int: int = 16, last_resort: bool = False) -> str | None:
    """A small value for a required parameter, from its name and hint; None when nothing fits. ``last_resort``: an
    unannotated parameter that no rule names gets the default size (an int is what most unnamed sizes are)."""
    low = name.lower()
    ann = annotation.replace(" ", "")
    if re.fullmatch(r"(batch_?size|batch|bsz|bs|n_batch|num_batch)", low) and ann in ("", "int"):
        return "2"  # the batch the inputs are drawn with (a model that builds its state as zeros(1, batch_size, h))
    if re.fullmatch(_TENSOR_ANNOTATION, ann):
        # a tensor the constructor is handed (bohyunshin/recommender's ``Model(user_ids: torch.Tensor, item_ids:
        # torch.Tensor, num_users: int, ...)``, stored by the base class; a mask or a table): the same values on
        # both sides (prove.ms_ctor converts the text), ids as ids (0 .. n-1), any other as distinct floats
        if _INTEGER_ANNOTATION.fullmatch(ann) or re.search(r"(^|_)(ids?|idx|index|indices|labels?|tokens?)$", low):
            return f"torch.arange({default_int})"
        return exact_ramp(default_int)
    if re.search(_MODULE_ARGS, low) or ann in ("nn.Module", "Module", "torch.nn.Module"):
        return _IDENTITY
    if re.search(_ACTIVATION_ARGS, low) and ann in ("", "Callable", "nn.Module", "Type[nn.Module]"):
        return _ACTIVATION
    if low == "device":
        return "'cpu'"
    if low in _LAYER_FLAGS and ann in ("", "bool"):
        # a flag named as torch's layers name theirs, handed on to one (jiwidi/DeepSpeech-pytorch's
        # ``BidirectionalGRU(rnn_dim, hidden_size, dropout, batch_first)``: 16 there, "batch_first should be of type
        # bool, got: int"): the value torch's layer defaults to, or the one that keeps a block whole
        return _LAYER_FLAGS[low]
    if re.search(_PATH_NAMES, low) and ann in ("", "str", "Path", "os.PathLike", "Optional[str]", "str|None"):
        # a file's name or path (Darknet(cfgfile): ``open(cfgfile)``): no small value is one, and an int is a file
        # descriptor to open(): 16 read and closed the builder's own descriptor ("OSError: [Errno 9] Bad file
        # descriptor", ayooshkathuria/pytorch-yolo-v3). The repository's own call names the file, or nothing does
        return None
    # a required dtype (point-e's keyword-only ``*, device: torch.device, dtype: torch.dtype, width: int``; the tensor
    # type a model makes its states in, ``.type(dtype)``): the float32 the inputs are drawn in (prove.ms_ctor spells
    # it as MindSpore's for the converted model)
    if re.fullmatch(r"(param_|compute_|model_)?dtype", low) or ann in ("torch.dtype", "dtype"):
        return "torch.float32"
    if low in ("bias", "affine", "has_bias") and ann in ("", "bool"):
        # a layer's switch handed to its layers (``nn.Conv2d(..., bias=bias)``): on, as their default; never a size
        # (16 passed torch's truth test, MindSpore's Conv2d refuses it: "'has_bias' must be a bool, but got int")
        return "True"
    if ann in ("bool",) or low.startswith(("use_", "is_", "has_", "with_")):
        return "False"
    if re.fullmatch(r"d_[a-z]+", low) and ann in ("", "int"):  # d_k, d_v, d_model: sizes
        return str(default_int)
    if re.search(r"dilation", low) and ann in ("", "int"):  # dilation_rate is a dilation, not a probability
        return "1"
    if re.search(r"(up|down)_?sampl\w*_?(rate|factor|ratio)$", low) and ann in ("", "int"):
        return "2"  # an upsampling factor (a vocoder's ConvTranspose stride), neither a sample rate nor a drop rate
    if re.search(r"(^|_)sampl(e|ing)_?rates?$|(^|_)sr$", low) and ann in ("", "int"):  # not upsample_rates
        return "16000"
    if re.search(r"growth", low) and ann in ("", "int"):  # a DenseNet's growth_rate: channels each layer adds
        return str(default_int)
    if re.search(r"(^|_)eps(ilon)?$|smooth", low) and ann in ("", "float"):
        # 0.1: a label smoothing's epsilon is checked to lie in [0, 1) (Keith-Dao/PyTorch-Models' LabelSmoothing:
        # "epsilon must be in [0, 1), got 1.0"), a norm's eps still shows in its output
        return "0.1"
    if re.fullmatch(r"init(ializer)?_?(range|std)|(\w+_)?std", low) and ann in ("", "float"):
        # a weight initialiser's standard deviation (BERT's initializer_range, ``nn.init.normal_(w, std=std)``):
        # 0.02, as those configurations have it (16 made every weight a huge draw)
        return "0.02"
    if ann == "float" or re.search(r"drop|alpha|beta|gamma|temperature|scale$|rate$|prob|(^|_)lr$|"
                                   r"(^|_)p$", low):
        return "0.0" if re.search(r"drop|prob|(^|_)p$|rate$", low) else "1.0"
    if ann in ("str",):
        # a required string nothing names (bohyunshin/recommender's ``loss_name: str``, stored by the base class and
        # read by the training code only): its own name, as a last resort (a string that picks something fails as
        # no value did)
        return repr(name) if last_resort else None
    members = _union_members(ann)
    if members and not re.search(_PLURAL_SIZES, low):
        # ``Union[int, Tuple[int, int]]``, ``int | tuple``: the value of the first kind that has one (a size's int
        # before its per-axis tuple; a plural name keeps its list below; PointCNN's Conv(in_channels: int, ..., kernel_size: Union[int, Tuple[int,
        # int]]) was left unbuilt: "required parameters of unknown kind"); a scalar kind before a sequence
        for member in members:
            value = small_value(name, member, default_int, last_resort)
            if value is not None:
                return value
        return None
    if (re.search(_PLURAL_SIZES, low) and ann != "int"
            and not re.match(r"(n|num|n_num|number_of)_", low)) or ann.startswith(("list", "List", "tuple", "Tuple", "Sequence")):
        return "[2, 2]" if re.search(r"layers|blocks|depths", low) else "[16, 16]"
    optional = re.fullmatch(r"Optional\[(float|bool)\]|(float|bool)\|None|None\|(float|bool)", ann)
    if optional:  # Optional[float] without a default: a float
        return small_value(name, next(g for g in optional.groups() if g), default_int, last_resort)
    if ann in ("", "int", "Optional[int]", "int|None", "None|int"):
        for pattern, value in _INT_HINTS:
            if re.search(pattern, low):
                return str(value if value != 16 else default_int)
        if ann == "int" or (last_resort and ann == ""):
            return str(default_int)
    return None


def _union_members(ann: str) -> list[str]:
    """The member kinds of a union annotation (spaces removed): ``Union[int,Tuple[int,int]]`` -> ["int",
    "Tuple[int,int]"], ``int|tuple`` -> ["int", "tuple"], ``Union[int,None]`` -> ["int"]; None left out, the scalar
    kinds first. [] when ``ann`` is no union (or ``int|None``, which the callers read as their Optional forms)."""
    inner = ann[6:-1] if ann.startswith("Union[") and ann.endswith("]") else ann
    parts, depth, start = [], 0, 0
    sep = "," if inner is not ann else "|"
    for i, ch in enumerate(inner):
        depth += ch in "[("
        depth -= ch in "])"
        if ch == sep and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    parts = [p for p in parts if p and p not in ("None", "NoneType")]
    if inner is ann and len(parts) < 2:
        return []  # ``int|None``: the callers' Optional forms
    # a scalar kind first: the size, not its per-axis list (MindSpore's layers refuse a list where torch takes one)
    return sorted(parts, key=lambda p: {"int": 0, "float": 1, "bool": 2}.get(p, 3))


_MISSING = re.compile(r"missing \d+ required (?:positional|keyword-only) arguments?: ((?:'\w+'(?:, | and )?)+)")


def _kwargs_handed_on(cand: dict, ctor: str, exc: BaseException) -> str | None:
    """The constructor with the arguments the class its ``**kwargs`` are handed to says are missing, at small values,
    for a factory or class that takes ``**kwargs`` (torchvision-style ``def resnet18(**kwargs): return
    ResNet(BasicBlock, [2, 2, 2, 2], **kwargs)``; kenshohara/video-classification-3d-cnn-pytorch's 18 factories:
    "ResNet.__init__() missing 2 required positional arguments: 'sample_size' and 'sample_duration'"). None when the
    error is another, or the candidate takes no ``**kwargs``, or a name has no small value."""
    chain, seen = [], exc
    while seen is not None and len(chain) < 4:  # the builder may wrap it (a cause or a context)
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    typed = next((e for e in chain if isinstance(e, TypeError)), None)
    if typed is None or not any(p["kind"] == "var_keyword" for p in cand["params"]):
        return None
    m = _MISSING.search(str(typed))
    if m is None:
        return None
    own = {p["name"] for p in cand["params"]}
    names = [n for n in re.findall(r"'(\w+)'", m.group(1)) if n not in own and not re.search(rf"\b{n}\s*=", ctor)]
    values = [small_value(n, "", 16, last_resort=True) for n in names]
    if not names or any(v is None for v in values):
        return None
    return ", ".join(filter(None, [ctor, *(f"{n}={v}" for n, v in zip(names, values))]))


# a flag that makes a model download its weights when true (torchvision-style ``pretrained=True`` defaults): the
# builder has no network, so a build at the default always failed (bubbliiiing/deeplabv3-plus-pytorch's
# ``def xception(pretrained=True, downsample_factor=16)``: "URLError: network access is disabled"); what is proven
# is the architecture, at its own and at random weights, never the downloaded ones
_DOWNLOAD_FLAGS = ("pretrained", "pretrain", "use_pretrained", "load_pretrained", "pretrained_backbone", "download")


def _offline(cand: dict) -> str:
    """``pretrained=False`` (and the like) for each download flag of the candidate that defaults to True."""
    return ", ".join(f"{p['name']}=False" for p in cand["params"]
                     if p["name"] in _DOWNLOAD_FLAGS and p["default"] == "True"
                     and p["kind"] in ("positional", "keyword"))


def ctor_attempts(cand: dict, user: str | None) -> list[tuple[str, str]]:
    """(source, ctor text) in the order they are tried."""
    out: list[tuple[str, str]] = []

    def add(origin: str, text: str | None) -> None:
        if text is not None and all(text != t for _, t in out):
            out.append((origin, text))

    add("mindport.toml", user)
    for text in cand["ctors"][:6]:
        add("repository", text)
    required = [p for p in cand["params"] if p["default"] is None and p["kind"] in ("positional", "keyword")]
    first = first_values = probe = None
    offline = _offline(cand)
    if not required:
        add("defaults", "")
        add("defaults, without downloading weights", offline or None)
        first = ""
    # the calls the repository's own code makes (call_sites.py: recorded while its classes were built on the meta
    # device): a block's arguments as its container computes them, before guessed sizes
    for text in cand.get("recorded", [])[:3]:
        add("repository call site", text)
    if required:
        # 32: GroupNorm(32, ch) in the model needs channels divisible by 32 (DDPM, DiT); 64 last: a head count
        # computed as d_model // head_dim with head_dim 64 is 0 below it ("a layer of width 0": gau-nernst's
        # Whisper and T5 attention, ``n_heads = d_model // 64``)
        for size, last_resort in ((16, False), (8, False), (16, True), (32, False), (64, False)):
            # the repository's own defaults of a namespace's keys at the first attempt that is complete: the
            # last-resort pass when the first left a parameter of unknown kind (fmu2/realNVP's couplings,
            # ``(in_out_dim, mid_dim, mask_config, hps)``: mask_config has a value only as a last resort, where
            # ``hps.res_blocks`` was guessed by its plural name, [2, 2], not train.py's ``--res_blocks`` 8, and
            # ``if res_blocks > 0`` failed: 7 of its 10 classes not built)
            defaults = size == 16 and (not last_resort or first_values is None)
            values = [(repr(p["choices"][0]) if p.get("choices") else None) or _config_value(p, cand, size)
                      or used_value(p, size, repository_defaults=defaults)
                      # a plural name the class uses as a count or a size is an int (StemGNN's ``units``:
                      # ``nn.GRU(time_step, units)``, ``torch.zeros(size=(units, 1))``), not the plural's list
                      or small_value(p["name"], p["annotation"] or ("int" if p.get("count") else ""), size,
                                     last_resort) for p in required]
            _tie_counts(required, values)
            _tie_lengths(required, values)
            _table_shapes(required, values, cand["params"], size)
            values = [_as_count(p, v) for p, v in zip(required, values)]
            probe = values if probe is None else probe  # a file path has no small value: the repository's files below
            if all(v is not None for v in values):
                add("small values", ", ".join([*(f"{p['name']}={v}" for p, v in zip(required, values)),
                                               *filter(None, [offline])]))
                if first is None:
                    first, first_values = ", ".join(f"{p['name']}={v}" for p, v in zip(required, values)), values
    # a repository call with arguments computed from data (``Encoder(INPUT_DIM, ENC_EMB_DIM, HID_DIM, ...)`` after
    # ``INPUT_DIM = len(SRC.vocab)``, scan's ``partial_args``): its literal arguments, the others at the small values
    # below, before those alone (the call was dropped and every size guessed: bentrevett/pytorch-seq2seq's notebooks)
    small = dict(zip((p["name"] for p in required), first_values or ()))
    at = next((i for i, (o, _) in enumerate(out) if o == "small values"), len(out))
    for partial in cand.get("partial_ctors", [])[:3]:
        values = small | partial
        if any(p["name"] not in values for p in required):
            continue
        text = ", ".join(f"{p['name']}={values[p['name']]}" for p in cand["params"] if p["name"] in values)
        if all(text != t for _, t in out):
            out.insert(at, ("repository call, other arguments small", text))
            at += 1
    # a file the class reads its architecture from (``Darknet(config_path)`` parses a ``.cfg``; ``cfgfile``,
    # ``model_def``): the repository's files of that kind, smallest first (yolov3-tiny.cfg before yolov3.cfg), before
    # the small values (a number there: "Bad file descriptor", eriklindernoren/PyTorch-YOLOv3)
    at = next((i for i, (o, _) in enumerate(out) if o == "small values"), len(out))
    base = first_values if first_values is not None else probe
    for i, p in enumerate(required if base is not None else []):
        if not _FILE_PARAM.fullmatch(p["name"].lower()) or p.get("use") or p.get("choices") \
                or (p.get("annotation") or "str") not in ("str", "Path", "os.PathLike", "str | Path"):
            continue  # a configuration read by keys or attributes is no path (``repository_configs``)
        for rel, path in _architecture_files(cand.get("repo_files") or [], p["name"].lower())[:3]:
            values = [repr(path) if j == i else v for j, v in enumerate(base)]
            if any(v is None for v in values):
                continue
            text = ", ".join(f"{q['name']}={v}" for q, v in zip(required, values))
            if all(text != t for _, t in out):
                out.insert(at, (f"repository file {rel}", text))
                at += 1
    # a configuration the class reads by keys or attributes that one of the repository's YAML files holds
    # (yacs: ``extra = cfg.MODEL.EXTRA``, the experiments' YAML files), as that file has it, then at small widths:
    # before the guessed sizes (repository_config_value)
    if first_values is not None and cand.get("repo_configs"):
        found = []
        for shrink in (False, True):
            values, origin = list(first_values), None
            for i, p in enumerate(required):
                picked = repository_config_value(p, cand, shrink)
                if picked is not None:
                    values[i], origin = picked
            if origin is not None:
                found.append((f"repository config {origin}" + (" (small widths)" if shrink else ""),
                              ", ".join(f"{p['name']}={v}" for p, v in zip(required, values))))
        # with the repository's literal arguments of a call it makes (DeNA/PyTorch_YOLOv3's ``YOLOLayer(config_model,
        # layer_no=0, in_ch=1024)`` inside a builder function): the configuration and those, before the guesses
        for partial in cand.get("partial_ctors", [])[:1]:
            values, origin = small | partial, None
            for p in required:
                picked = repository_config_value(p, cand)
                if picked is not None:
                    values[p["name"]], origin = picked
            text = ", ".join(f"{p['name']}={values[p['name']]}" for p in cand["params"] if p["name"] in values)
            if origin is not None and all(p["name"] in values for p in required) and all(text != t for _, t in out):
                at = next((i for i, (o, _) in enumerate(out) if o == "repository call, other arguments small"),
                          len(out))
                out.insert(at, (f"repository config {origin}, repository call", text))
        at = next((i for i, (o, _) in enumerate(out) if o == "small values"), len(out))
        for origin, text in found:
            if all(text != t for _, t in out):
                out.insert(at, (origin, text))
                at += 1
    # a bottleneck block (``expansion = 4``) without a downsample adds its input to planes * 4 channels: planes is
    # the input's channels // 4 (HRNet's, torchvision's Bottleneck(inplanes, planes))
    names = [p["name"] for p in required]
    ins = [n for n in names if re.fullmatch(r"in_?planes|in_?channels|inp|in_chs|in_ch", n.lower())]
    outs = [n for n in names if re.fullmatch(r"(out_?)?planes|out_?channels|oup|out_chs|out_ch", n.lower())]
    if cand.get("expansion", 0) > 1 and len(ins) == 1 and len(outs) == 1:
        for size in (16, 32):
            values = {p["name"]: (repr(p["choices"][0]) if p.get("choices") else None)
                      or used_value(p, size) or small_value(p["name"], p["annotation"], size) for p in required}
            values[ins[0]], values[outs[0]] = str(size), str(max(1, size // cand["expansion"]))
            if all(v is not None for v in values.values()):
                add("small values", ", ".join(f"{k}={v}" for k, v in values.items()))
    # a None default the class reads attributes or keys of (``configs=None`` then ``configs.wavelet``): its use
    nones = [p for p in cand["params"] if p["default"] == "None" and p.get("use") in ("namespace", "mapping", "instance")
             and p.get("attrs")]
    if nones and first is not None:
        add("None defaults used", ", ".join(filter(None, [first, ", ".join(
            f"{p['name']}={used_value(p)}" for p in nones)])))
    # a None default the constructor computes with (voxceleb_trainer's Bottle2neck(inplanes, planes, kernel_size=None,
    # dilation=None): ``math.floor(kernel_size / 2) * dilation``, "unsupported operand type(s) for /: 'NoneType' and
    # 'int'"): each such parameter that its name says is a number gets that number (kernel 3, dilation 1, sizes 16)
    numbers = [(p["name"], small_value(p["name"], p["annotation"], 16)) for p in cand["params"]
               if p["default"] == "None" and p["kind"] in ("positional", "keyword") and p.get("use") in ("", "number")]
    numbers = [(k, v) for k, v in numbers if v is not None and re.fullmatch(r"-?\d+(\.\d+)?", v)]
    if numbers and first is not None:
        add("None defaults as numbers", ", ".join(filter(None, [first, ", ".join(f"{k}={v}" for k, v in numbers)])))
    # keys the constructor reads from its **kwargs by subscript (pretrained=kwargs['pretrained']): each by name, the
    # small value of its name, else None
    keys = [k for p in cand["params"] if p["kind"] == "var_keyword" for k in (p.get("attrs") or {})]
    if keys and first is not None:
        add("keys read", ", ".join(filter(None, [first, ", ".join(
            f"{k}={small_value(k, '', 16) or 'None'}" for k in keys)])))
    shrunk = _shrunk(cand["params"])  # tried after the rest: it changes defaults (a model too large at them)
    if shrunk and first is not None:
        add("small sizes", ", ".join(filter(None, [first, shrunk])))
    # a configuration object at small sizes (BERT's Config(dim=768, n_layers=12) is over the parameter cap)
    if first_values is not None:
        small = [_config_value(p, cand, 16, shrink=True) or v for p, v in zip(required, first_values)]
        if small != first_values:
            add("small config", ", ".join(f"{p['name']}={v}" for p, v in zip(required, small)))
    # last: a configuration class of the module that does not build alone (it reads the dataset's files: Config(dataset,
    # embedding) opens dataset + '/data/class.txt'): the attributes the class reads, as a namespace
    configured = [i for i, p in enumerate(required) if _config_value(p, cand) is not None
                  and p.get("use") in ("namespace", "mapping") and p.get("attrs")]
    if configured and first_values is not None:
        values = list(first_values)
        for i in configured:
            values[i] = used_value(required[i])
        add("attributes read", ", ".join(f"{p['name']}={v}" for p, v in zip(required, values)))
    return out


_CONFIG = "__import__('mindport.discovery.configs', fromlist=['Config']).Config"
_YAML_FILES: dict[str, list] = {}


_FILE_PARAM = re.compile(r"(model_?)?(cfg|config|conf)_?(file|path|name|def)?|cfgfile|model_?(def|file|path)|"
                         r"(cfg|config|yaml|json)_?(file|path)s?")
_ARCHITECTURE_SUFFIXES = (".cfg", ".yaml", ".yml", ".json")
_FILES: dict[str, list[tuple[str, str, int]]] = {}


# the settings files of development tools, which a class given a configuration path never reads (mamba-tabular's
# EmbeddingLayer was given its .pre-commit-config.yaml)
_TOOLING_FILES = frozenset({"mkdocs.yml", "mkdocs.yaml", "environment.yml", "environment.yaml", "codecov.yml",
                            "docker-compose.yml", "docker-compose.yaml", "package.json", "package-lock.json",
                            "tsconfig.json", "renovate.json", "citation.cff", "readthedocs.yml", "readthedocs.yaml",
                            "meta.yaml", "tox.ini", "setup.cfg", "pyrightconfig.json", "launch.json",
                            "settings.json", "devcontainer.json"})


def repository_files(root: str, limit: int = 2000, max_bytes: int = 64_000) -> list[tuple[str, str, int]]:
    """(path relative to ``root``, absolute path, size) of the repository's small ``.cfg``/YAML/JSON files (at most
    ``limit`` looked at), read once per repository: the files a class given a configuration path may read."""
    if root not in _FILES:
        out = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for f in sorted(files):
                path = os.path.join(folder, f)
                if f.startswith(".") or f.lower() in _TOOLING_FILES:
                    continue  # a tool's settings (.pre-commit-config.yaml, mkdocs.yml): no model's configuration
                if f.endswith(_ARCHITECTURE_SUFFIXES) and os.path.isfile(path) \
                        and 0 < os.path.getsize(path) <= max_bytes:
                    out.append((os.path.relpath(path, root), os.path.abspath(path), os.path.getsize(path)))
            if len(out) >= limit:
                break
        _FILES[root] = out
    return _FILES[root]


def _architecture_files(files: list, name: str) -> list[tuple[str, str]]:
    """The files a path parameter called ``name`` may take: a ``cfg`` name takes ``.cfg`` files (Darknet's), a
    ``yaml``/``json`` name those, else any of the kinds; ``.cfg`` first, then the smallest."""
    kinds = (".cfg",) if "cfg" in name else (".yaml", ".yml") if "yaml" in name else (".json",) if "json" in name \
        else _ARCHITECTURE_SUFFIXES
    picked = [f for f in files if f[0].endswith(kinds) and not f[0].startswith((".github", "docs/"))]
    picked.sort(key=lambda f: (_ARCHITECTURE_SUFFIXES.index(os.path.splitext(f[0])[1]), f[2]))
    return [(rel, path) for rel, path, _ in picked]


def repository_configs(root: str, limit: int = 400, max_bytes: int = 64_000) -> list[tuple[str, str, dict]]:
    """(path relative to ``root``, text, mapping) of the repository's YAML files that load as a mapping (PyYAML's
    safe loader; none when PyYAML is absent): at most ``limit`` files of at most ``max_bytes`` each, in path order.
    Read once per repository."""
    if root in _YAML_FILES:
        return _YAML_FILES[root]
    out: list[tuple[str, str, dict]] = []
    try:
        import yaml
    except ImportError:
        _YAML_FILES[root] = out
        return out
    paths = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        # a YAML file named .cfg (DeNA/PyTorch_YOLOv3's config/yolov3_default.cfg, read with yaml.load): an INI or
        # darknet .cfg loads as no mapping of string keys and is left out below
        paths += [os.path.join(folder, f) for f in sorted(files) if f.endswith((".yaml", ".yml", ".cfg"))]
        if len(paths) >= limit:
            break
    for path in paths[:limit]:
        try:
            if os.path.getsize(path) > max_bytes:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            data = yaml.safe_load(text)
        except Exception:  # noqa: BLE001 - a file that is no YAML of ours (templates, CI files with tags)
            continue
        if isinstance(data, dict) and data and all(isinstance(k, str) for k in data):
            out.append((os.path.relpath(path, root), text, data))
    # a configuration tree written in Python (yacs' config/default.py: ``_C = CN()``, ``_C.MODEL = CN()``,
    # ``_C.MODEL.NUM_JOINTS = 16``): its defaults alone, and each YAML file over them as yacs' merge_from_file
    # does (a YAML file of the experiments holds only what it changes)
    defaults = python_config_trees(root, limit, max_bytes)
    merged = []
    for rel, text, data in out:
        for _, _, tree in defaults:
            if set(data) & set(tree) and set(data) <= set(tree):
                merged.append((rel, text, _merged(tree, data)))
    out = merged + out + defaults
    _YAML_FILES[root] = out
    return out


def _merged(base: dict, over: dict) -> dict:
    """``base`` with ``over``'s keys on top, nested mappings merged (yacs' ``merge_from_file``)."""
    out = dict(base)
    for k, v in over.items():
        out[k] = _merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


_TREE_ROOT = re.compile(r"^\s*(\w+)\s*=\s*[\w.]+\(\s*(\w+\s*=\s*\w+\s*|\{.*\})?\)\s*(#.*)?$", re.M)


def python_config_trees(root: str, limit: int = 400, max_bytes: int = 64_000) -> list[tuple[str, str, dict]]:
    """(path relative to ``root``, text, mapping) of the configuration trees the repository's Python files build by
    attribute assignments: a name bound to a call without positional arguments (``_C = CN()``, ``config =
    ConfigNode()``, ``__C = edict()``, ``config = ml_collections.ConfigDict()``) whose attributes are then set, nested,
    by at least three assignments, at module level (yacs' config/default.py; the text is the file's) or in a function
    that returns it (ViT's ``def get_b16_config(): ... return config``; the text is the function's; a function that
    starts from another one of the file, ``config = get_b16_config()``, starts from its tree). A node is a call of one
    of the roots' callees (``_C.MODEL.EXTRA = CN(new_allowed=True)``; with one dict literal, that dict); a value is a
    literal; anything else (computed) is left out. Files are read as text, never imported."""
    import ast

    out = []
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            seen += 1
            path = os.path.join(folder, f)
            try:
                if os.path.getsize(path) > max_bytes:
                    continue
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            rel = os.path.relpath(path, root)
            if "namedtuple" in text:
                out += _namedtuple_records(text, rel)
            roots = {m.group(1) for m in _TREE_ROOT.finditer(text)}
            roots = {r for r in roots if len(re.findall(rf"^\s*{re.escape(r)}\.\w+(\.\w+)*\s*=", text, re.M)) >= 3}
            if not roots:
                continue
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError):
                continue
            callees: set = set()
            found = _config_trees(tree.body, roots, {}, callees)
            out += [(rel, text, data) for data in found.values() if _tree_worth(data)]
            known: dict = {}
            for node in tree.body:
                if isinstance(node, ast.FunctionDef) and node.body and isinstance(node.body[-1], ast.Return) \
                        and isinstance(node.body[-1].value, ast.Name) and node.body[-1].value.id in roots:
                    data = _config_trees(node.body, roots, known, callees).get(node.body[-1].value.id)
                    if data is not None and _tree_worth(data):
                        known[node.name] = data
                        out.append((rel, ast.get_source_segment(text, node) or text, data))
        if seen >= limit * 10:
            break
    return out


def _namedtuple_records(text: str, rel: str) -> list[tuple[str, str, dict]]:
    """(rel, the statement's text, fields) of the module-level records of a namedtuple class the file defines
    (quark0/darts' genotypes.py: ``Genotype = namedtuple('Genotype', 'normal normal_concat reduce reduce_concat')``,
    then ``DARTS_V2 = Genotype(normal=[('sep_conv_3x3', 0), ...], normal_concat=[2, 3, 4, 5], ...)``), each field a
    literal (a record with a computed field, ``range(2, 6)``, is left out). A model reading those attributes of a
    parameter (``genotype.normal``) gets one as a repository configuration. Read as text, never run."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    fields: dict[str, list[str]] = {}
    out = []
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)):
            continue
        call, name = node.value, node.targets[0].id
        callee = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        if callee == "namedtuple" and len(call.args) >= 2:
            try:
                names = ast.literal_eval(call.args[1])
            except ValueError:
                continue
            names = names.replace(",", " ").split() if isinstance(names, str) else list(names)
            if names and all(isinstance(n, str) and n.isidentifier() for n in names):
                fields[name] = names
        elif callee in fields and isinstance(call.func, ast.Name) and len(call.args) <= len(fields[callee]):
            data = {}
            try:
                for key, arg in [*zip(fields[callee], call.args), *((k.arg, k.value) for k in call.keywords)]:
                    data[key] = ast.literal_eval(arg)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                continue
            if None not in data and set(data) == set(fields[callee]) and _tree_worth(data):
                out.append((rel, ast.get_source_segment(text, node) or text, data))
    return out


def _tree_worth(data: dict) -> bool:
    return len(data) >= 2 or any(isinstance(v, dict) and v for v in data.values())


def _config_trees(statements: list, roots: set, known: dict, callees: set) -> dict:
    """{root name: nested mapping} of the attribute assignments in ``statements`` (python_config_trees); ``known``:
    the trees of the file's functions so far, ``callees``: the roots' callees so far (nodes are calls of them)."""
    import ast
    import copy

    trees: dict = {}
    left_out = object()

    def node_value(value):
        if isinstance(value, ast.Call) and ast.unparse(value.func) in callees and not value.keywords or \
                isinstance(value, ast.Call) and ast.unparse(value.func) in callees and not value.args:
            if not value.args:
                return {}
            if len(value.args) == 1 and isinstance(value.args[0], ast.Dict):
                item = ast.literal_eval(value.args[0])
                return item if isinstance(item, dict) else left_out
            return left_out
        return ast.literal_eval(value)

    for node in statements:
        if isinstance(node, ast.Delete):  # del config.patches.size
            for target in node.targets:
                chain = []
                while isinstance(target, ast.Attribute):
                    chain.insert(0, target.attr)
                    target = target.value
                node_ = trees.get(target.id) if chain and isinstance(target, ast.Name) else None
                for key in chain[:-1]:
                    node_ = node_.get(key) if isinstance(node_, dict) else None
                if isinstance(node_, dict):
                    node_.pop(chain[-1], None)
            continue
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and target.id in roots and isinstance(value, ast.Call) and not value.args:
            callee = ast.unparse(value.func)
            if callee in known:
                trees[target.id] = copy.deepcopy(known[callee])
            else:
                callees.add(callee)
                trees[target.id] = {}
            continue
        chain = []
        while isinstance(target, ast.Attribute):
            chain.append(target.attr)
            target = target.value
        if not chain or not isinstance(target, ast.Name) or target.id not in trees:
            continue
        chain.reverse()
        try:
            item = node_value(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        if item is left_out:
            continue
        node_ = trees[target.id]
        for key in chain[:-1]:
            node_ = node_.get(key)
            if not isinstance(node_, dict):
                break
        else:
            node_[chain[-1]] = item
    return trees


def _covers(data, attrs: dict) -> bool:
    """Does ``data`` hold every key ``attrs`` (scan.py's reads of a parameter) names, nested alike?"""
    from mindport.discovery.scan import GET_KEY, IN_KEY

    keys = [k for k in attrs if k not in ("[]", GET_KEY, IN_KEY)]
    if not keys or not isinstance(data, dict):
        return False
    optional = set(attrs.get(GET_KEY) or ())  # read with .get: ViT-pytorch's ``config.patches.get("grid")``
    if all(k in optional for k in keys) and not any(k in data for k in keys):
        return False
    for k in keys:
        if k not in data and k in optional:
            continue
        if k not in data:
            return False
        if isinstance(attrs[k], dict) and [j for j in attrs[k] if j not in ("[]", GET_KEY, IN_KEY)] \
                and not _covers(data[k], attrs[k]):
            return False
    return True


def _shrunk_config(value, key: str = ""):
    """A configuration at small widths: an int (or a list of ints) under a width-like key (``_SHRINK`` without the
    counts: NUM_CHANNELS, NUM_DECONV_FILTERS, hidden_dim) over 16 becomes 16; counts (layers, blocks, branches) are
    kept, a configuration checks them against the lengths of its lists (``assert num_layers == len(num_filters)``)."""
    if isinstance(value, dict):
        return {k: _shrunk_config(v, str(k)) for k, v in value.items()}
    low = key.lower()
    if re.search(r"factor$|mult$|multiplier$|^widen|widening", low) and type(value) is int and value > 2:
        return 2  # a multiplier of the widths (hysts' WRN-28-10: widening_factor 10, 36.5 M parameters)
    if not re.search(_SHRINK, low) or re.search(r"depth|layers|blocks|n_layer|nlayers|vocab|tokens|head", low):
        return value
    if type(value) is int and value > 16:
        return 16
    if isinstance(value, list) and value and all(type(v) is int for v in value):
        return [min(v, 16) for v in value]
    return value


def _sections(data, depth: int = 1, limit: int = 2) -> list[tuple[int, dict]]:
    """(depth, mapping) of the mappings inside a configuration with string keys, ``limit`` levels down at most."""
    out = []
    if depth > limit or not isinstance(data, dict):
        return out
    for value in data.values():
        if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
            out.append((depth, value))
            out += _sections(value, depth + 1, limit)
    return out


def repository_config_value(param: dict, cand: dict, shrink: bool = False) -> tuple[str, str] | None:
    """(value text, YAML path) for a constructor parameter the class reads by keys or attributes (``cfg.MODEL.EXTRA``,
    ``cfg['MODEL']['NUM_JOINTS']``: scan.py's ``attrs``) when one of the repository's YAML files
    (``cand["repo_configs"]``, ``repository_configs``) holds every key read: that file's sections the class reads, as
    a ``configs.Config`` (keys and attributes both), at small widths with ``shrink``. A file that names the model's
    module or class is preferred (microsoft/human-pose-estimation's experiments/*/resnet50/*.yaml with ``NAME:
    pose_resnet`` for pose_resnet.py), then the shortest. None when no file holds them."""
    attrs = param.get("attrs") or {}
    if param.get("use") not in ("namespace", "mapping") or not attrs:
        return None
    rel_of, _, name_of = str(cand.get("class", "")).rpartition(":")
    stem = os.path.splitext(os.path.basename(cand.get("rel") or rel_of))[0].lower()
    name = str(cand.get("name") or name_of).lower()
    best = None
    for rel, text, data in cand.get("repo_configs") or []:
        low = text.lower()
        # the file, else one section of it (a mapping inside, two levels at most: DeNA/PyTorch_YOLOv3's
        # ``YOLOv3(cfg['MODEL'])``), which the repository hands over whole
        for depth, part in [(0, data), *_sections(data)]:
            if not _covers(part, attrs):
                continue
            score = (depth > 0, -(stem in low or name in low), len(text), rel)
            if best is None or score < best[0]:
                best = (score, rel, part)
    if best is None:
        return None
    (nested, *_), rel, data = best
    from mindport.discovery.scan import GET_KEY, IN_KEY

    section = dict(data) if nested else {k: data[k] for k in attrs if k not in ("[]", GET_KEY, IN_KEY) and k in data}
    if shrink:
        section = _shrunk_config(section)
    return f"{_CONFIG}({section!r})", rel


def _table_shapes(required: list[dict], values: list, params: list[dict], size: int) -> None:
    """A tensor argument (scan.py's ``use == "tensor"``: pretrained embeddings handed to ``nn.Parameter``) gets
    ``table(rows, columns)``: the shape of the layer whose weight it replaces, from the values chosen for the sizes
    that layer is built with (``nn.Embedding(vocab_size, embedding_length)``: vocab_size x embedding_length), else
    size x size; in place."""
    import ast as _ast

    chosen = {p["name"]: v for p, v in zip(required, values)}
    chosen.update({p["name"]: p["default"] for p in params if p["default"] is not None and p["name"] not in chosen})
    for i, p in enumerate(required):
        if p.get("use") != "tensor":
            continue
        dims = []
        for d in (p.get("attrs") or {}).get("shape") or [size, size]:
            try:
                value = _ast.literal_eval(chosen[d]) if isinstance(d, str) else d
            except (KeyError, ValueError, SyntaxError, TypeError):
                value = None
            dims.append(value if type(value) is int and 0 < value <= 4096 else size)
        values[i] = f"{_TABLE}({dims[0]}, {dims[1]})"


def _tie_counts(required: list[dict], values: list) -> None:
    """A count the class checks against a list's length (HRNet: ``num_branches != len(num_blocks)``) is that length,
    in place."""
    import ast as _ast

    names = [p["name"] for p in required]
    for i, p in enumerate(required):
        if p.get("len_of") in names and values[names.index(p["len_of"])] is not None:
            try:
                seq = _ast.literal_eval(values[names.index(p["len_of"])])
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            if isinstance(seq, (list, tuple)):
                values[i] = str(len(seq))


def _tie_lengths(required: list[dict], values: list) -> None:
    """A list the class checks against another's length (alelab's graph networks: ``assert len(dimNodeSignals) ==
    len(nFilterTaps) + 1``, one feature width per layer and one more) gets that length, in place: its last item
    repeated, or its tail cut."""
    import ast as _ast

    names = [p["name"] for p in required]
    for i, p in enumerate(required):
        rel = p.get("len_rel") or []
        if len(rel) != 2 or rel[0] not in names or values[i] is None or values[names.index(rel[0])] is None:
            continue
        try:
            seq, other = _ast.literal_eval(values[i]), _ast.literal_eval(values[names.index(rel[0])])
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if not (isinstance(seq, list) and isinstance(other, (list, tuple)) and seq):
            continue
        want = len(other) + rel[1]
        if want >= 1:
            values[i] = repr((seq + [seq[-1]] * want)[:want])


_SHRINK = r"dim|channel|chan$|hidden|embed|width|features|filters|units|planes|d_model|n_embd|ff|inner|mlp|head|" \
          r"depth|layers|blocks|n_layer|nlayers|vocab|tokens"


def _small_size(name: str, value):
    """The small value of a size-like argument (``_SHRINK`` names: ``embed_dim=768`` -> 16, ``depths=[3, 3, 9, 3]``
    -> ``[1, 1, 1, 1]``, ``dims=[96, 192, 384, 768]`` -> ``[16, 16, 16, 16]``), or None when the name is not size-like
    or the value is already that small."""
    if not re.search(_SHRINK, name.lower()):
        return None
    layered = re.search(r"depth|layers|blocks|n_layer", name.lower())
    if isinstance(value, int) and not isinstance(value, bool):
        text = small_value(name, "int") or "16"
        small = 1 if layered else int(text) if text.isdigit() else 16  # channel_mult: a list name, an int here
        return small if 0 < small < value else None
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        new = type(value)(min(v, 1 if layered else 16) for v in value)
        return new if new != value else None
    return None


def _shrunk(params: list[dict]) -> str:
    """Keyword arguments that make a model small: size-like parameters with an integer (or list of integers) default
    larger than the small value of their name (``_small_size``); "" when none."""
    import ast as _ast

    out = []
    for p in params:
        if p["default"] is None or p["kind"] not in ("positional", "keyword"):
            continue
        try:
            value = _ast.literal_eval(p["default"])
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        small = _small_size(p["name"], value)
        if small is not None:
            out.append(f"{p['name']}={small!r}")
    return ", ".join(out)


_ODD_WANTED = re.compile(r"\bodd\b", re.I)
_KERNEL_NAME = re.compile(r"(^|_)(kernels?|kernel_?sizes?|ksizes?|k_?sizes?|kernel_?widths?|kernel_?len(gth)?s?|"
                          r"filter_?widths?|filter_?sizes?)$", re.I)


def _ctor_call(ctor: str):
    """The constructor text as the call ``f(ctor)`` parsed (an ``ast.Call``), or None when it does not parse so."""
    import ast as _ast

    try:
        call = _ast.parse(f"f({ctor})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return call if isinstance(call, _ast.Call) else None


def odd_kernels(ctor: str, params: list[dict]) -> str | None:
    """The constructor text ``ctor`` with each even kernel size odd (one less; 3 for 2 and under), when building
    said a number must be odd ("kernel_size should be a odd number for padding": a "same" padding of (k - 1) // 2).
    The kernel sizes are the parameters named so, given in ``ctor`` (by keyword or position) or else their int
    defaults, which a container hands on as they are (dudgns0908/Conformer's ConformerBlock: ``conv_kernel_size=32``
    by default, its ConvolutionModule asserting an odd one; the block and the encoder not built); a list of sizes,
    one per layer (``filter_widths``), each even item odd. None when no kernel size is even."""
    import ast as _ast

    call = _ctor_call(ctor)
    if call is None:
        return None
    positional = [p["name"] for p in params if p["kind"] == "positional"]
    given = {kw.arg: kw for kw in call.keywords if kw.arg}
    changed = False

    def odd(value):
        if isinstance(value, (list, tuple)) and value and all(type(v) is int for v in value):
            # one size per layer (facebookresearch/VideoPose3D's ``filter_widths=[3, 3, 3]``, guessed [8, 16]:
            # "Only odd filter widths are supported"): each even one odd
            items = [odd(v) or v for v in value]
            return type(value)(items) if items != list(value) else None
        return (value - 1 if value > 2 else 3) if type(value) is int and value % 2 == 0 else None

    for p in params:
        name = p["name"]
        if not _KERNEL_NAME.search(name) or p["kind"] not in ("positional", "keyword"):
            continue
        index = positional.index(name) if name in positional else None
        if name in given:
            node = given[name].value
        elif index is not None and index < len(call.args) and not any(
                isinstance(a, _ast.Starred) for a in call.args[:index + 1]):
            node = call.args[index]
        else:
            try:
                new = odd(_ast.literal_eval(p["default"])) if p["default"] is not None else None
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                new = None
            if new is not None:
                call.keywords.append(_ast.keyword(arg=name, value=_ast.parse(repr(new), mode="eval").body))
                changed = True
            continue
        try:
            new = odd(_ast.literal_eval(node))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            new = None
        if new is None:
            continue
        changed = True
        if name in given:
            given[name].value = _ast.parse(repr(new), mode="eval").body
        else:
            call.args[index] = _ast.parse(repr(new), mode="eval").body
    if not changed:
        return None
    return _ast.unparse(call)[2:-1]


def shrunk_call(ctor: str, params: list[dict]) -> str | None:
    """The constructor text ``ctor`` (a call's arguments, as the repository wrote them) with its literal size-like
    arguments small (``_small_size``), positional ones named by ``params`` order: a construction over the parameter
    cap (``ResNet(Bottleneck, [3, 4, 23, 3])``, FocalNet's ``depths=[2, 2, 18, 2], embed_dim=128``) becomes the same
    class at depth one per stage (``ResNet(Bottleneck, [1, 1, 1, 1])``), every block kind still built and run. None
    when nothing in it shrinks."""
    import ast as _ast

    call = _ctor_call(ctor)
    if call is None:
        return None
    names = [p["name"] for p in params if p["kind"] == "positional"]
    changed = False

    def small(name: str, node: _ast.expr) -> _ast.expr:
        nonlocal changed
        try:
            value = _ast.literal_eval(node)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return node
        new = _small_size(name, value)
        if new is None:
            return node
        changed = True
        return _ast.parse(repr(new), mode="eval").body

    for i, arg in enumerate(call.args):
        if isinstance(arg, _ast.Starred) or i >= len(names):
            break
        call.args[i] = small(names[i], arg)
    for kw in call.keywords:
        if kw.arg is not None:
            kw.value = small(kw.arg, kw.value)
    if not changed:
        return None
    return _ast.unparse(call)[2:-1]


_SPATIAL_SIZE = r"^(img|image|input|in|feat|feature|frame|map|spatial)_?(size|shape|hw)$"


def exact_ramp(n: int, falling: bool = False) -> str:
    """The text of ``n`` distinct float32 values spread over [0.5, 1) (1024 of them, then again), each ``k / 2048``
    and so computed bit for bit the same by torch and by MindSpore (prove.ms_ctor converts the text). ``torch.linspace``
    is not: torch computes its second half back from the end, MindSpore all from the start, 87 of 256 values one ulp
    apart, which a Chebyshev diffusion of order 16 over the graph's supports grew to 4.5e-4 of the output
    (panwangwin/SpatialTemporalNetTrainer-pytorch's DiffusionGCN2, reported diverged on identical code)."""
    stride = max(1024 // max(n, 1), 1)
    ramp = f"torch.arange({n}, dtype=torch.float32){f' * {stride}' if stride > 1 else ''} % 1024"
    return f"({'2047 - ' if falling else '1024 + '}{ramp}) / 2048"


_SUPPORTS = re.compile(r"supports|(graph_?)?support_?(list|mats|matrices)|adj_?(mxs|mats|matrices|list|lists)|adjs|"
                       r"adjacenc(ies|y_?list|y_?matrices)")


def used_value(param: dict, size: int = 16, repository_defaults: bool = True) -> str | None:
    """A value of the kind the class uses the parameter as (scan.py's ``use``): a namespace with the attributes it
    reads (``args.hidden_size`` -> ``SimpleNamespace(hidden_size=16)``; an attribute with a literal argparse default
    in the repository gets it when ``repository_defaults``), a dict with the keys it reads, a list, or a module for a
    callable. None for a number (or a string without known choices): ``small_value`` decides."""
    use = param.get("use", "")
    if any(_DROPOUT_PASS.fullmatch(f"{callee}:{at}") for callee, at in param.get("passes") or ()):
        # a probability handed to a dropout (``nn.Dropout(dout)``, ``nn.LSTM(..., dropout=dout)``) under a name no
        # rule knows (marumalo/pytorch-seq2seq's ``dout``): none dropped, as the eval proof runs ("dropout
        # probability has to be between 0 and 1, but got 16")
        return "0.0"
    layered = _layered_value(param, size)
    if layered is not None:
        return layered
    if re.fullmatch(_TENSOR_ANNOTATION, (param.get("annotation") or "").replace(" ", "")):
        return None  # a tensor the annotation names, whose .shape the class reads: small_value's tensor, no namespace
    if use == "callable":
        return _IDENTITY
    if use == "class":  # a block class of the project (scan.py's ``_block_classes``), named in the model's module
        return param["attrs"]["class"]
    if use == "instance":  # an object of a project class whose methods the class calls (ACNet's ConvBuilder): built
        # with its own constructor, None for each required argument
        return f"{param['attrs']['class']}({', '.join(['None'] * param['attrs'].get('required', 0))})"
    if use == "sequence" and _SUPPORTS.fullmatch(param["name"].lower()):
        # a graph's supports (transition or adjacency matrices over its nodes: DCRNN, Graph WaveNet, STGCN), each
        # diffused over the nodes (``torch.einsum('ij,bjk->bik', support, x)``): two N x N matrices of positive
        # values whose rows sum to about 1, N the size the node count gets; the same on both sides (prove.ms_ctor
        # converts the text). As ints, [8, 16]: "expected Tensor as element 0 in argument 1, but got int"
        # (panwangwin/SpatialTemporalNetTrainer-pytorch's DiffusionGCN, DiffusionGCN2, DCGRUCell, DCRNN ...)
        scale = 1 << max(size - 1, 1).bit_length()  # a power of two >= N: dividing by it is exact on both sides
        return "[" + ", ".join(f"({exact_ramp(size * size, falling)}).reshape({size}, {size}) / {scale}"
                               for falling in (False, True)) + "]"
    if use == "sequence":  # two different values: a (start, end) pair must not give an empty range
        value = small_value(param["name"], "list", size)
        length = param.get("length", 0)
        if value is not None and not value.startswith("["):  # a float-kind name read as a sequence (a diffusion's
            # betas: len(betas), 1 - betas): floats in (0, 1), as many as the class reads, else two
            return repr([round(0.1 * (i + 1), 1) for i in range(length or 2)])
        items = param.get("items") or []
        if "sequence" in items:  # unpacked into names some of which it reads as sequences (graph_conv_dim,
            # aux_dim, linear_dim = conv_dim): a list of sizes at those, a size at the others
            return repr([[size // 2, size] if kind == "sequence" else size for kind in items])
        if length:  # as long as the class reads it (H, W, C = image_shape; layers[3]): a count per stage, or sizes
            if value not in (None, "[16, 16]"):
                return repr([2] * length)
            item = small_value(param["name"], "int", size) or ""
            if re.fullmatch(r"\d+", item) and int(item) != size and re.search(r"kernel|ksize|stride|dilation|pad",
                                                                              param["name"].lower()):
                # a window per axis (``kernel_size[0] // 2, kernel_size[1] // 2``): each item the name's own value,
                # a tuple (MindSpore's layers refuse a list where torch's take one)
                return repr(tuple([int(item)] * length))
            if length == 2 and re.search(_SPATIAL_SIZE, param["name"].lower()):
                # a spatial size (``self.height, self.width = input_size``: a ConvLSTM's state is made at that size,
                # its input must match): square, as the input forms are (``_to_rank``: 16 x 16)
                return repr([size, size])
            return repr([size // 2, *[size] * (length - 1)])
        item = small_value(param["name"], "int", size) or ""
        if re.fullmatch(r"\d+", item) and re.search(r"kernel|ksize|stride|dilation", param["name"].lower()):
            return f"({item}, {item})"  # a window per axis: the name's own value each (3, not [8, 16]), a tuple
        return f"[{size // 2}, {size}]" if value in (None, "[16, 16]") else value
    if use == "flag" and small_value(param["name"], param.get("annotation", ""), size) is None:
        return "False"  # only tested for truth (if learn_top:): a switch
    if use in ("namespace", "mapping"):
        return _mapping(param.get("attrs") or {}, use == "namespace", size, repository_defaults)
    if use == "number" and (small_value(param["name"], param.get("annotation", ""), size) or "").startswith("["):
        # a plural-looking count (``char_rnn_layers``, ``layers`` in ``range(layers - 1)``): a number, not a list
        low = param["name"].lower()
        return str(next((v if v != 16 else size for pattern, v in _INT_HINTS if re.search(pattern, low)), size))
    return None


def _layered_value(param: dict, size: int) -> str | None:
    """A per-layer argument of a stack as its constructor's own checks accept it (scan.py's ``_layer_checks``,
    ``_hand_on_items``): one tuple when it takes a tuple, or a single value it repeats per layer whose items are
    tuples (``kernel_size=(3, 3)``); a single number when it repeats one (``hidden_dim=16`` for ``[16] *
    num_layers``: its length then agrees with ``num_layers``, whatever that is); a list of tuples when each item
    must be one (``[(3, 3), (3, 3)]``). None when the class checks nothing of the kind."""
    accepts, item = param.get("accepts", ""), param.get("item", 0)
    if not accepts and not item:
        return None
    number = small_value(param["name"], "int", size) or str(size)
    if not re.fullmatch(r"\d+", number):
        number = str(size)
    pair = "(" + ", ".join([number] * (item or 2)) + ")"
    if accepts == "tuple" or (accepts == "one" and item):
        return pair
    if accepts == "one":
        return number
    return "[" + ", ".join([pair] * (param.get("length") or 2)) + "]"


# a parameter scan.py saw handed to a dropout's probability: torch's dropout layers (first argument or ``p``), the
# ``dropout`` of its recurrent and transformer layers and of MultiheadAttention, the functional dropouts' ``p``
_DROPOUT_PASS = re.compile(r"torch:(Dropout\d?d?|AlphaDropout|FeatureAlphaDropout):(0|p)|"
                           r"torch:(RNN|LSTM|GRU|Transformer\w*|MultiheadAttention):dropout|"
                           r"torch:(\w+\.)?(dropout\d?d?|alpha_dropout|feature_alpha_dropout):(1|p)")


_LOGGER_KEY = re.compile(r"(\w+_)?logger")  # a configuration's logger object (never a size)


# what code reads of an array (numpy's or a tensor's attributes and methods): an object read only through these is
# an array handed to the constructor (a graph shift operator, an adjacency or support matrix: ``GSO.shape``,
# ``GSO.reshape([1, N, N])``), not a configuration
_ARRAY_ATTRS = frozenset({"shape", "reshape", "ndim", "dtype", "T", "astype", "transpose", "copy", "flatten", "sum",
                          "toarray", "todense", "tocoo", "nonzero", "diagonal", "squeeze", "max", "min", "mean"})


def _mapping(attrs: dict, namespace: bool, size: int, repository_defaults: bool) -> str:
    from mindport.discovery.scan import (ANY_KEY, COUNT_KEY, FLAG_KEY, GET_KEY, IN_KEY, NONE_KEY, SEQUENCE_KEY,
                                         STR_KEY)

    if namespace and attrs and set(attrs) <= _ARRAY_ATTRS and set(attrs) - {"shape", "dtype"}:
        # (``shape`` alone is a gym space's: a tuple, below)
        # a square matrix of seeded values in [0, 1 / size): the same array on both sides, its powers shrinking as a
        # normalised graph operator's do (alelab-upenn's SelectionGNN met ``GSO.reshape([1, N, N])`` as an int on a
        # SimpleNamespace)
        return f"(__import__('numpy').random.RandomState(0).rand({size}, {size}) / {size}).astype('float32')"
    items = []
    for key, default in attrs.items():
        if key in ("[]", GET_KEY, IN_KEY, ANY_KEY):  # scan.py's marks of a mapping inside, of a read with .get, of an
            continue  # ``in`` test, of a read at a computed key
        if isinstance(default, dict):
            value = _mapping(default, "[]" not in default, size, repository_defaults)
        elif default == FLAG_KEY:  # only tested for truth: a switch, off
            value = "False"
        elif default == NONE_KEY:  # tested against None: the class's own path for its absence
            value = "None"
        elif default == STR_KEY:  # a string's method called on it, no default known: a string (its name, as a
            value = small_value(key, "str", size, last_resort=True) or repr(key)  # required str's last resort)
        elif default == COUNT_KEY:  # handed on as a count (num_layers=cfg.lstm_layers): a number, never a list
            value = next((str(v if v != 16 else size) for pattern, v in _INT_HINTS if re.search(pattern, key.lower())),
                         str(size))
        elif key == "shape" and default is None:  # envs.single_observation_space.shape: a shape is a tuple
            value = f"({size},)"
        elif default is None and _LOGGER_KEY.fullmatch(key.lower()):  # args.logger.info(...) (Orca0917's FastSpeech2
            # keeps its logger in the configuration): a logger that records nothing at the builder's level
            value = "__import__('logging').getLogger('mindport.discovery.stand-in')"
        elif default == SEQUENCE_KEY:  # options['fc_lay'][i]: a list, each item of the key's kind
            item = small_value(key, "", size, last_resort=True)
            item = "'relu'" if re.search(r"(^|_)act", key.lower()) else "False" if re.search(
                r"(^|_)(use|is|has|with)_", key.lower()) else item if item and not item.startswith("[") else str(size)
            value = f"[{item}, {item}]"
        elif default is not None and (repository_defaults or re.fullmatch(r"'[^'\\]*'|\"[^\"\\]*\"", default)):
            # a string (a choice: ``opt.FeatureExtraction`` 'VGG', scan._compared_strings) is never a size: kept at
            # the small sizes too (16 there reached deep-text-recognition's "No FeatureExtraction module specified")
            value = default
        else:
            value = small_value(key, "", size, last_resort=True) or "None"
        items.append((key, value))
    if namespace and all(k.isidentifier() for k, _ in items):
        if GET_KEY in attrs:  # read as h.x and with h.get("y"): a namespace with .get and [] too (an AttrDict,
            # BigVGAN's and HiFi-GAN's config object; SimpleNamespace has no .get; a missing attribute stays an
            # AttributeError, as getattr(h, "dtype", None) in library code expects)
            return ("type('AttrDict', (__import__('types').SimpleNamespace,), {'get': lambda self, k, d=None: "
                    "getattr(self, k, d), '__getitem__': lambda self, k: getattr(self, k)})("
                    + ", ".join(f"{k}={v}" for k, v in items) + ")")
        if IN_KEY in attrs:  # tested with ``'dropout' not in args`` (RAFT): the argparse Namespace such an ``args`` is,
            # whose ``in`` asks for the attribute (SimpleNamespace: "argument of type ... is not iterable")
            return "__import__('argparse').Namespace(" + ", ".join(f"{k}={v}" for k, v in items) + ")"
        return "__import__('types').SimpleNamespace(" + ", ".join(f"{k}={v}" for k, v in items) + ")"
    text = "{" + ", ".join(f"{k!r}: {v}" for k, v in items) + "}"
    if ANY_KEY in attrs:  # read at keys it computes (ATEC2018's ``data_config[self.mode + '_size']``): a dict whose
        # every other key reads a small size
        return f"type('AnyKeys', (dict,), {{'__missing__': lambda self, k: {size}}})({text})"
    return text


def _as_count(param: dict, value: str | None) -> str | None:
    """A float guess (a ``scale`` is 1.0 by its name) for a number the class uses as a count or a size
    (``Param.count``: ``x.repeat(1, 1, self.y_scale)``, ``x.view(b, h * self.y_scale)``): the int, at least 1."""
    if param.get("count") and value is not None and re.fullmatch(r"-?\d+\.\d*", value):
        return str(max(1, round(float(value))))
    return value


def _config_value(param: dict, cand: dict, size: int = 16, shrink: bool = False) -> str | None:
    """A configuration object: the class the annotation names when it is one of the module's configuration classes,
    or the module's only one for a parameter named like a configuration, built with its own defaults except for
    sizes it leaves unset (a required field, or ``vocab_size: int = None``: small values by name); ``shrink``: its
    size-like fields smaller too (``_shrunk``: ``n_layer=12`` -> 1, ``n_embd=768`` -> 16)."""
    configs = cand.get("configs", [])
    ann = param["annotation"].strip("'\"")
    name = ann if ann in configs else configs[0] if len(configs) == 1 and re.fullmatch(
        r"(config|cfg|conf|args|params|hparams|model_args|opt|opts)", param["name"].lower()) else None
    if name is None:
        return None
    fields = cand.get("config_fields", {}).get(name, [])
    args = []
    for f in fields:
        hint = f["annotation"].replace(" ", "")
        if f["default"] is None or (f["default"] == "None" and hint in ("int", "float")):
            value = small_value(f["name"], hint, size, last_resort=True)
            if value is None:
                if f["default"] is None:
                    return None  # a required field of unknown kind
                continue
            args.append(f"{f['name']}={value}")
    if shrink:
        unset = {a.split("=")[0] for a in args}
        args += [a for a in _shrunk(fields).split(", ") if a and a.split("=")[0] not in unset]
    return f"{name}({', '.join(args)})"


# ------------------------------------------------------------------------------------------------------ in torch

class _Timeout(Exception):
    pass


def _alarm(seconds: float):
    def handler(signum, frame):
        raise _Timeout(f"took over {seconds:g} s")

    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def _no_alarm():
    signal.setitimer(signal.ITIMER_REAL, 0)


_KEPT_MODULES = ("torch", "numpy", "mindspore", "mindport", "scipy")  # imported before any limit is armed


class _Limited:
    """``with _Limited(seconds):`` the time limit of one attempt. When it fires inside an import (a model file's
    ``import matplotlib.pyplot`` on a busy machine, under record_call_sites' 5 s), the modules that import had
    finished stay in ``sys.modules`` half-wired and the one it was in is gone: every later attempt of the process
    failed on the remains (ayooshkathuria/pytorch-yolo-v3: 7 of 7 not built, "KeyError: 'Collection:kwdoc' (at
    _docstring.py:82)", where 5 build on an idle machine). The modules the attempt added are forgotten when the limit
    fired, so that the next attempt imports them afresh. Of the libraries imported before any limit is armed
    (``_KEPT_MODULES``), the new modules whose package the interrupted import left out of ``sys.modules`` go too: a
    limit firing inside ``scipy.signal``'s first import left its finished submodules, and every later import of
    ``scipy.signal`` in the process failed ("name '_signal_api' is not defined", its ``__init__`` no longer sets the
    submodule it then deletes: 14 of 15 classes of seorim0's speech enhancement repository not built, under load)."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def __enter__(self):
        self.before = set(sys.modules)
        _alarm(self.seconds)
        return self

    def __exit__(self, kind, exc, tb):
        _no_alarm()
        if exc is not None and (isinstance(exc, _Timeout) or isinstance(exc.__cause__, _Timeout)):
            added = set(sys.modules) - self.before
            # torch's own modules register themselves in torch's process-wide tables when imported (torch._dynamo.pgo
            # in the compile cache's artifact factory): imported twice, the second import refuses ("Artifact of
            # type=pgo already registered in mega-cache artifact factory"). A first Optimizer built in a constructor
            # (MythraV/rl_lib's DDPG critic: self.optim = optim(self.parameters(), ...)) imports torch._dynamo, 2 s
            # idle, past the limit on a busy machine: every later attempt of the process failed so (6 of 8 classes
            # not built). Those are kept and the package the limit stopped is imported to its end now, unlimited
            torch_left = sorted(n for n in added if n.split(".")[0] == "torch" and _orphaned(n))
            for name in added:
                if name in torch_left:
                    continue
                if name.split(".")[0] not in _KEPT_MODULES or _orphaned(name):
                    sys.modules.pop(name, None)
            _finish_imports(torch_left)
        return False


def _finish_imports(names: list[str]) -> None:
    """Import the packages above ``names`` that an interrupted import left out of ``sys.modules``, outermost first."""
    import importlib

    missing = sorted({".".join(n.split(".")[:i]) for n in names for i in range(1, n.count(".") + 1)} - set(sys.modules),
                     key=lambda n: n.count("."))
    for package in missing:
        if package in sys.modules:
            continue
        try:
            importlib.import_module(package)
        except Exception:  # noqa: BLE001 - as the next attempt would have met it
            pass


def _orphaned(name: str) -> bool:
    """Is a package that holds module ``name`` missing from ``sys.modules`` (its import failed after the module's
    finished)?"""
    parts = name.split(".")
    return any(".".join(parts[:i]) not in sys.modules for i in range(1, len(parts)))


def _no_network() -> None:
    import socket

    def refuse(*args, **kwargs):
        raise OSError("network access is disabled while mindport builds models")

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse


def first_layer_inputs(model, fwd_params: list[dict]) -> list[list[str]]:
    """Input spec lists from the first layer with a known input form, in registration order."""
    import torch.nn as nn

    known = (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d, nn.Linear,
             nn.Embedding, nn.EmbeddingBag, nn.RNNBase, nn.LayerNorm, nn.modules.batchnorm._BatchNorm, nn.GroupNorm,
             nn.Unfold)
    layers = [m for m in model.modules() if isinstance(m, known)]
    first = layers[0] if layers else None
    required = [p for p in fwd_params if p["default"] is None and p["kind"] == "positional"]
    handed = _handed_layer(model, required[0]) if required else None
    # the layer the forward hands its first argument to (``self.conv(x)``) before the one registered first
    if handed is not None:
        first = handed
    # a recurrent layer registered before the embedding that feeds it (a seq2seq decoder's rnn, then its embedding):
    # the tokens come first
    elif isinstance(first, nn.RNNBase):
        feeding = [m for m in layers if isinstance(m, nn.Embedding) and m.embedding_dim == first.input_size]
        first = feeding[0] if feeding else first
    specs = _unfold_specs(model, first) if isinstance(first, nn.Unfold) else _layer_specs(first)
    # the first layer registered is not always the first applied (Graph-WaveNet registers its dilated convolutions
    # before its start_conv): the layer of the same kind that takes the fewest channels is tried next
    if isinstance(first, (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Linear)):
        size = (lambda m: m.in_features) if isinstance(first, nn.Linear) else (lambda m: m.in_channels)
        fewest = min((m for m in layers if type(m) is type(first)), key=size)
        if size(fewest) != size(first):
            specs += [sp for sp in _layer_specs(fewest) if sp not in specs]
    specs = [sp for sp in _grid_specs(model, specs) if sp not in specs] + specs
    weight = getattr(first, "weight", None)
    if getattr(weight, "dtype", None) is not None and str(weight.dtype) == "torch.float64":
        # a layer built in float64 (``nn.Linear(n, h, dtype=torch.float64)``: Orca0917's AutoRec) takes float64
        # ("mat1 and mat2 must have the same dtype, but got Float and Double" for float32)
        specs = [sp.replace(":float32", ":float64") for sp in specs]
    channels_first = isinstance(first, (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d,
                                        nn.ConvTranspose3d, nn.modules.batchnorm._BatchNorm, nn.GroupNorm, nn.Unfold))
    if not specs:  # no layer of a known kind first (parameters used directly, functional code): common forms
        sizes = sorted({v for m in model.modules() for v in _int_attrs(m)} | {16}, key=lambda v: v != 16)[:3]
        specs = [f for v in sizes for f in (f"2x{v}:float32", f"2x8x{v}:float32", f"2x{v}x32x32:float32",
                                            f"2x{v}x32:float32")]
        channels_first = None  # either layout
    rank = required[0].get("rank", 0) if required else 0
    if rank:  # the rank the forward reads its input with: forms of that rank first (the others after)
        ranked = [r for sp in specs for r in _to_rank(sp, rank, channels_first)]
        specs = list(dict.fromkeys(ranked + specs))[:max(len(specs), 6)]
    # integer tokens for a later argument: first below the smallest embedding table's size too (BERT's segment ids
    # beside its tokens: Embedding(2, dim)); such ids index every table of the model
    tables = [m.num_embeddings for m in model.modules() if isinstance(m, nn.Embedding)]
    out = []
    for spec in specs:
        options = [_model_forms(model, p, spec) + _argument_inputs(p, spec) for p in required[1:]]
        tokens = re.fullmatch(r"([\dx]+):int64:0:(\d+)", spec)
        if tokens and tables and min(tables) < int(tokens.group(2)):
            fewer = f"{tokens.group(1)}:int64:0:{min(tables)}"
            options = [[fewer, *o] if o and o[0] == spec else o for o in options]
        out.append([spec, *(o[0] for o in options)])
        for i, alternatives in enumerate(options):  # each further form of one argument, the others at their first
            for alt in alternatives[1:]:
                out.append([spec, *(o[0] for o in options[:i]), alt, *(o[0] for o in options[i + 1:])])
        out.extend(_all_none(spec, options))
    return out


def _all_none(spec: str, options: list[list[str]]) -> list[list[str]]:
    """The inputs with every optional argument at None at once, when two or more are (``_argument_inputs``' last form
    for an argument only compared with None). PSMNet's ``hourglass.forward(x, presqu, postsqu)`` is first called with
    ``(cost0, None, None)``: a tensor for either one alone is added to a tensor of another resolution ("The size of
    tensor a (16) must match the size of tensor b (32)"), and one-at-a-time variation never leaves both at None."""
    nones = [i for i, o in enumerate(options) if len(o) > 1 and o[-1] == "value:None"]
    if len(nones) < 2:
        return []
    return [[spec, *("value:None" if i in nones else o[0] for i, o in enumerate(options))]]


# a token grid the model keeps (Swin's PatchMerging(input_resolution, dim), its blocks, its WindowAttention's
# window_size): its input is batch x (H * W) tokens x width
_GRID_ATTRS = re.compile(r"(input_|patches_|patch_|token_|feat_|feature_)?resolution|grid_size|patch_grid|window_size")
_WIDTH_ATTRS = re.compile(r"dim|embed_dim|d_model|hidden_dim|hidden_size|in_dim|in_features|num_features|channels")


def _grid_specs(model, specs: list[str]) -> list[str]:
    """Forms ``2 x (H * W [* D]) x C`` for a model that keeps a token grid of two or three sizes (``_GRID_ATTRS``:
    ``self.input_resolution = (8, 16)``; it checks ``L == H * W`` or adds a bias table of that many positions), C the
    width the model keeps (``self.dim``), then the features of the first layer's own forms; [] otherwise."""
    grids = []
    for name, value in vars(model).items():
        if _GRID_ATTRS.fullmatch(name.lower()) and type(value) in (list, tuple) and len(value) in (2, 3) \
                and all(type(v) is int and 0 < v <= 256 for v in value):
            n = 1
            for v in value:
                n *= v
            if n not in grids and n <= 4096:
                grids.append(n)
    if not grids:
        return []
    widths = [v for k, v in vars(model).items()
              if _WIDTH_ATTRS.fullmatch(k.lower()) and type(v) is int and 0 < v <= 4096]
    widths += [int(sp.split(":")[0].split("x")[-1]) for sp in specs
               if ":float" in sp and re.fullmatch(r"\d+(x\d+)*", sp.split(":")[0])]
    return [f"2x{n}x{w}:float32" for n in grids for w in dict.fromkeys(widths)][:4]


_STATE_NAMES = re.compile(r"(hidden|hiddens|hidden_states?|hx|hc|h|h0|h_0|h_c|hid|states?|prev_(state|hidden)s?|"
                          r"last_hidden|rnn_state|recurrent_state|init_state|(cur|curr|current|last)_(state|hidden)s?|"
                          r"h_prev|hidden_prev|state_prev)")
_CELL_STATE_NAMES = re.compile(r"c|c0|c_0|cx|cell|cell_state|c_prev|prev_cell|c_t|ct")
_CONV_STATE_WIDTHS = ("hidden_dim", "hidden_channels", "hidden_size", "hid_dim", "num_hidden", "hidden", "nhid",
                      "n_hidden", "hidden_features")
_STATE_INITS = ("init_hidden", "initHidden", "init_hidden_state", "init_state", "initial_state", "init_states",
                "begin_state", "zero_state", "get_initial_state")
# a float argument beside integer tokens: an encoder's output, a memory, features
_FLOAT_BESIDE_TOKENS = re.compile(r"enc|memory|context|output|feat|emb|src_hidden|keys?$|values?$|latent|cond")


_CONDITION_NAMES = re.compile(r"y|c|cond|condition|conditions|labels?|class_?labels?|classes|cls|(y|c|labels?)_?"
                              r"(one_?hot|oh|vec)|one_?hot|one_?hot_?labels?")
_CLASS_COUNTS = re.compile(r"_?((num|n)_?class(es)?|class(es)?_?(num|count)|n?class|num_?labels|n_?labels|"
                           r"label_?(dim|size)|n_?cond|cond_?dim|num_?conds?)")


def _class_count(model) -> int | None:
    """The number of classes a model keeps (``self.num_classes``, ``self.n_classes``, ``self.label_dim``), or None."""
    return next((v for k, v in vars(model).items() if type(v) is int and 1 < v <= 4096
                 and _CLASS_COUNTS.fullmatch(k.lower())), None)


def _model_forms(model, param: dict, spec: str) -> list[str]:
    """Forms for a forward argument after the first that only the built model can tell (before the forms by name):
    a recurrent state (``forward(input, hidden)``) as the model's own ``init_hidden`` makes it for the first input's
    batch, else as its first recurrent layer takes it (LSTM: ``(h, c)``; ``num_layers x batch x hidden``); an
    encoder's output beside integer tokens (``forward(trg_seq, trg_mask, enc_output, src_mask)``) as floats of the
    embedding's width; a vector whose width the model keeps under the argument's name (``emb``: ``emb_channels``).
    None for an argument the forward uses as a Python value."""
    import torch.nn as nn

    shape, _, rest = spec.partition(":")
    if not re.fullmatch(r"\d+(x\d+)*", shape) or param.get("use") in ("callable", "flag", "number") \
            or param.get("choices"):  # a Python value (``_argument_inputs``)
        return []
    dims = [int(v) for v in shape.split("x")]
    low = param["name"].lower()
    handed = _handed_layer(model, param)
    if handed is not None:  # the layer the forward hands it to (``self.embed(y)``) says its form
        return _handed_forms(handed, dims, rest.startswith("int"))
    cell = bool(_CELL_STATE_NAMES.fullmatch(low))
    if cell or _STATE_NAMES.fullmatch(low):
        return _state_forms(model, dims, cell=cell)
    classes = _class_count(model) if _CONDITION_NAMES.fullmatch(low) else None
    if classes:
        # a class condition beside the input of a model that keeps a class count (a conditional VAE or GAN's
        # ``forward(x, y)``, y one-hot: ``torch.argmax(y, dim=1)``, ``torch.cat((z, y.float()), dim=1)``): batch x
        # that count, then the class ids (debtanu177/CVAE_MNIST: given the image's form, "shape '[2, 1, 1, 1]' is
        # invalid for input of size 2048")
        return [f"{dims[0]}x{classes}:float32:0:1", f"{dims[0]}:int64:0:{classes}"]
    widths = [m.embedding_dim for m in model.modules() if isinstance(m, nn.Embedding)]
    if rest.startswith("int") and len(dims) == 2 and widths and _FLOAT_BESIDE_TOKENS.search(low) \
            and "mask" not in low:
        return [f"{dims[0]}x{dims[1]}x{widths[0]}:float32"]
    # an embedding or condition vector whose width the model keeps under the argument's name (NVlabs/edm's
    # ``UNetBlock.forward(x, emb)`` with ``self.emb_channels``): batch x that width
    sizes = [v for k, v in vars(model).items() if type(v) is int and 0 < v <= 4096 and k.lower().startswith(low)
             and re.fullmatch(r"_?(channels|ch|dim|dims|size|features|feats|width|len)", k.lower()[len(low):])]
    if sizes and len(low) > 1:
        return [f"{dims[0]}x{sizes[0]}:float32"]
    return []


_KNOWN_LAYERS = ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Linear",
                 "Unfold", "Embedding", "EmbeddingBag", "RNNBase", "LayerNorm", "_BatchNorm", "GroupNorm")


def _handed_layer(model, param: dict):
    """The layer of a known kind a forward argument is first handed to (scan.py's ``Param.layer``: ``self.X(arg)``):
    ``model.X`` itself, or the first such layer of a ``Sequential`` it is, past the leading modules that keep no
    weights and keep the input's form (an activation, a dropout, ``Identity``: a diffusion block's
    ``time_mlp = Sequential(Mish(), Linear(embed_dim, out))``, a DiT block's ``Sequential(SiLU(), Linear(...))``);
    through a block of the project's own, by position, the layer its forward hands that argument to (its first
    registered layer need not be the one it applies first); None otherwise."""
    import torch.nn as nn

    known = tuple(getattr(nn, n, None) or getattr(nn.modules.batchnorm, n) for n in _KNOWN_LAYERS)
    sub, position = (getattr(model, param["layer"], None), 0) if param.get("layer") else \
        _handed_through(model, param.get("name") or "")
    for _ in range(6):  # through the project's own blocks: a U-Net stage's ``self.resnet_block1(x, time_emb)``
        # whose ``forward(x, time_emb)`` hands ``x`` to ``self.normalize_1`` (GroupNorm(32, C)) and ``time_emb`` to
        # its time projection: an image of C channels, not the width of the Linear the stage registers first
        # (BvDod's DDPM blocks), and the embedding's own width
        while type(sub) is nn.Sequential and len(sub) and position == 0:
            lead = 0
            while lead < len(sub) - 1 and _form_keeping(sub[lead]):
                lead += 1
            sub = sub[lead]
        if sub is None or isinstance(sub, known) or not isinstance(sub, nn.Module) \
                or type(sub).__module__.split(".")[0] in ("torch", "einops"):
            break
        sub, position = _handed_through(sub, position)
    return sub if isinstance(sub, known) and position == 0 else None


def _handed_through(block, argument: int | str):
    """(sub-module, position): where a block of the project's own hands a forward argument (its name, or its position
    after self): the first call ``self.X(..., arg, ...)`` (scan's ``self_calls``) taking that argument itself
    positionally, and the position it takes there; (None, 0) when its source cannot be read or no call takes it."""
    import ast
    import inspect
    import textwrap

    import torch.nn as nn

    from mindport.discovery.scan import self_calls

    try:
        func = ast.parse(textwrap.dedent(inspect.getsource(type(block).forward))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return None, 0
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None, 0
    if isinstance(argument, int):
        if argument + 1 >= len(func.args.args):
            # a wrapper that hands on what it is given (``forward(self, *args)``: ``self.module(*args)``, a
            # spectral norm's or a weight norm's ``self.module.forward(*args)``, heykeetae/Self-Attention-GAN's
            # SpectralNorm around each ConvTranspose2d): the argument at its place among the starred ones
            rest = func.args.vararg.arg if func.args.vararg is not None else None
            at = argument + 1 - len(func.args.args)
            for attr, args in self_calls(func) if rest is not None else []:
                k = next((k for k, a in enumerate(args) if isinstance(a, ast.Starred)), None)
                if k is not None and isinstance(args[k].value, ast.Name) and args[k].value.id == rest:
                    sub = getattr(block, attr, None)
                    return (sub, k + at) if isinstance(sub, nn.Module) else (None, 0)
            return None, 0
        argument = func.args.args[argument + 1].arg
    for attr, args in self_calls(func):
        for k, a in enumerate(args):
            if isinstance(a, ast.Starred):
                break
            if isinstance(a, ast.Name) and a.id == argument:
                sub = getattr(block, attr, None)
                return (sub, k) if isinstance(sub, nn.Module) else (None, 0)
    return None, 0


def _form_keeping(module) -> bool:
    """A module without weights that gives its input's form back: an elementwise activation (torch's or the
    project's own, no parameters and no sub-modules), a dropout, ``Identity``; not a pooling, padding, reshaping or
    resampling layer (those change the form the next layer takes)."""
    import torch.nn as nn

    if any(True for _ in module.parameters()) or any(True for _ in module.children()):
        return False
    if isinstance(module, (nn.modules.dropout._DropoutNd, nn.Identity)):
        return True
    if type(module).__module__ == nn.modules.activation.__name__:
        return True
    return type(module).__module__.split(".")[0] not in ("torch", "einops") and \
        re.search(r"(?i)relu|elu|gelu|silu|swish|mish|tanh|sigmoid|softplus|act", type(module).__name__) is not None


def _handed_forms(layer, dims: list[int], tokens: bool) -> list[str]:
    """Forms for a forward argument after the first that the forward hands to ``layer`` (``_handed_layer``), for a
    first input of shape ``dims`` (``tokens``: integer): the first input's batch (and its sizes after the channels,
    for a layer of the same rank); an embedding's ids as one per sample (a class label) beside a float input, as the
    first input's shape beside integer tokens."""
    import torch.nn as nn

    batch = dims[0]
    if isinstance(layer, (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d,
                          nn.ConvTranspose3d)):
        rank = 3 if isinstance(layer, (nn.Conv1d, nn.ConvTranspose1d)) else 4 if isinstance(
            layer, (nn.Conv2d, nn.ConvTranspose2d)) else 5
        sizes = dims[2:] if len(dims) == rank else [32 if rank < 5 else 8] * (rank - 2)
        return ["x".join(map(str, [batch, layer.in_channels, *sizes])) + ":float32"]
    if isinstance(layer, nn.Linear):
        lead = dims[:-1] if len(dims) >= 2 and not tokens else [batch]
        return list(dict.fromkeys(["x".join(map(str, [*lead, layer.in_features])) + ":float32",
                                   f"{batch}x{layer.in_features}:float32"]))
    if isinstance(layer, (nn.Embedding, nn.EmbeddingBag)):
        n = layer.num_embeddings
        same = "x".join(map(str, dims)) + f":int64:0:{n}"
        label = f"{batch}:int64:0:{n}"
        return [same, label] if tokens else [label, f"{batch}x16:int64:0:{n}"]
    if isinstance(layer, nn.RNNBase):
        f = layer.input_size
        return [f"{batch}x8x{f}:float32"] if layer.batch_first else [f"8x{batch}x{f}:float32"]
    if isinstance(layer, (nn.modules.batchnorm._BatchNorm, nn.GroupNorm)):
        c = layer.num_features if isinstance(layer, nn.modules.batchnorm._BatchNorm) else layer.num_channels
        return ["x".join(map(str, [batch, c, *dims[2:]])) + ":float32"]
    if isinstance(layer, nn.LayerNorm):
        return ["x".join(map(str, [*dims[:-1], *layer.normalized_shape])) + ":float32"]
    return []


def _state_forms(model, dims: list[int], cell: bool = False) -> list[str]:
    """A recurrent state's forms for an input of shape ``dims`` (``_model_forms``); the batch is the input's first
    or second axis (a sequence-first recurrent layer). ``cell``: an LSTM's cell state handed alone (``c_0``)."""
    import inspect

    import torch
    import torch.nn as nn

    batches = list(dict.fromkeys(dims[:2]))
    out: list[str] = []
    init = next((getattr(model, n) for n in _STATE_INITS if callable(getattr(model, n, None))), None)
    if init is not None:
        try:
            required = [p for p in inspect.signature(init).parameters.values()
                        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            required = [None, None]
        # ``init_hidden(batch_size, image_size)``: a convolutional recurrent cell's zero state at the input's size
        calls = [()] if not required else [(b,) for b in batches] if len(required) == 1 else \
            [(dims[0], tuple(dims[-2:]))] if len(required) == 2 and len(dims) == 4 else []
        for args in calls:
            try:
                with torch.no_grad():
                    form = _spec_of(init(*args))
            except Exception:  # noqa: BLE001 - the layer's own form next
                continue
            if form and form not in out:
                out.append(form)
    rnn = next((m for m in model.modules() if isinstance(m, nn.RNNBase)), None)
    hidden = next((v for n in _CONV_STATE_WIDTHS if type(v := getattr(model, n, None)) is int and v > 0), None)
    if rnn is None and hidden is not None and len(dims) in (4, 5) \
            and any(isinstance(m, (nn.Conv2d, nn.Conv3d)) for m in model.modules()):
        # a convolutional recurrent cell's state (ConvLSTM's ``h_cur, c_cur = cur_state`` joined with the input
        # before ``conv(in_channels=input_dim + hidden_dim)``): the input's batch and spatial sizes at the hidden
        # width, a pair (LSTM) and one (GRU)
        h = "x".join(map(str, [dims[0], hidden, *dims[2:]])) + ":float32"
        for form in (f"({h}, {h})", h):
            if form not in out:
                out.append(form)
    if rnn is not None:
        layers = rnn.num_layers * (2 if rnn.bidirectional else 1)
        order = batches if rnn.batch_first else batches[::-1]
        for batch in order if len(dims) >= 2 else [None]:
            lead = f"{layers}x{batch}" if batch is not None else f"{layers}"
            h = f"{lead}x{getattr(rnn, 'proj_size', 0) or rnn.hidden_size}:float32"
            c = f"{lead}x{rnn.hidden_size}:float32"
            # an LSTM's (h, c) pair; its two halves handed as arguments of their own (TAnoGAN's ``forward(x, h_0,
            # c_0)``: ``self.lstm(x, (h_0, c_0))``), each alone after it; a cell state named as one, that alone
            forms = [c] if cell else [f"({h}, {c})", h] if isinstance(rnn, nn.LSTM) else [h]
            for form in forms:
                if form not in out:
                    out.append(form)
    return out


def _spec_of(value) -> str | None:
    """The input spec of a value a model's own method made (a float tensor, or a tuple or list of them), else None."""
    import torch

    if isinstance(value, torch.Tensor):
        if not value.is_floating_point() or value.dim() == 0:
            return None
        return "x".join(map(str, value.shape)) + ":float32"
    if type(value) in (tuple, list) and value:
        items = [_spec_of(v) for v in value]
        if any(i is None for i in items):
            return None
        inner = ", ".join(items) + ("," if type(value) is tuple and len(items) == 1 else "")
        return f"[{inner}]" if type(value) is list else f"({inner})"
    return None


_CHANNEL_LISTS = r"ch|channel|planes|dim|feat|enc|filters|width|hidden"


def sequence_inputs(model, fwd_params: list[dict], tries: list[list[str]]) -> list[list[str]]:
    """Input spec lists that give a list of tensors to each forward argument the forward reads as a sequence (scan.py's
    ``_sequence_usage``), the other arguments as in the first of ``tries``: one feature map per entry of a channel
    list the model keeps (HRNet's ``num_inchannels = [8, 16]``, a decoder's ``num_ch_enc``), each half the size of
    the one before (a feature pyramid: ``[2x8x32x32, 2x16x16x16]``); else copies of the argument's tensor form (as
    many as the forward unpacks, else 2 and 3), also with the last axis divided among them (concatenated into the
    first layer)."""
    import numpy as np

    required = [p for p in fwd_params if p["default"] is None and p["kind"] == "positional"]
    seqs = [i for i, p in enumerate(required) if p.get("use") == "sequence"]
    templates = [t for t in tries if len(t) == len(required)][:2]
    if not seqs or not templates:
        return []
    channel_lists = []
    for name, value in vars(model).items():
        if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu":
            value = value.tolist()
        if re.search(_CHANNEL_LISTS, name.lower()) and isinstance(value, (list, tuple)) and 2 <= len(value) <= 6 \
                and all(isinstance(v, int) and not isinstance(v, bool) and 0 < v <= 4096 for v in value):
            if list(value) not in channel_lists:
                channel_lists.append(list(value))
    out = []
    for template in templates:
        for i in seqs:
            spec = template[i]
            shape, _, rest = spec.partition(":")
            dims = shape.split("x") if re.fullmatch(r"\d+(x\d+)*", shape) else []
            forms = []
            if len(dims) >= 3 and not rest.startswith("int"):  # feature maps B x C x S..., halved per level
                for channels in channel_lists[:2]:
                    side = max(int(d) for d in dims[2:])
                    side = max(side, 2 ** len(channels))
                    forms.append([f"{dims[0]}x{c}" + f"x{max(side >> k, 1)}" * (len(dims) - 2) + ":" + rest
                                  for k, c in enumerate(channels)])
            length = required[i].get("length") or 0
            if length >= 2 and len(dims) >= 2 and not rest.startswith("int"):
                forms += _unpacked_forms(dims, rest, length, required[i].get("nested") or [])
            for n in ([length] if length else [2, 3]):
                forms.append([spec] * n)
                if dims and int(dims[-1]) % n == 0 and int(dims[-1]) > n:  # joined on the last axis into the layer
                    forms.append(["x".join([*dims[:-1], str(int(dims[-1]) // n)]) + ":" + rest] * n)
            for form in forms:
                out.append([*template[:i], "[" + ", ".join(form) + "]", *template[i + 1:]])
    return out[:16]


def _handed_forward_use(model, fwd_params: list[dict]) -> list[dict]:
    """The forward's parameters, a required argument the forward only hands to a block of the project (scan.py's
    ``Param.layer``: PseTae's ``self.spatial_encoder(input)``) taking the use that block's own forward makes of its
    first argument when it unpacks it (``a, b = input``: scan.py's ``_sequence_usage``, its length and nesting), so
    the container is tried with the tuple the block takes."""
    import ast
    import inspect
    import textwrap

    import torch

    from mindport.discovery import scan

    out = []
    for p in fwd_params:
        q = dict(p)
        if p["default"] is None and p["kind"] == "positional" and not p.get("use") and p.get("layer"):
            for func in _handed_functions(model, p["layer"]):
                try:
                    params = scan._params(func.args, True)
                    scan._mapping_usage(func, params)
                    scan._object_usage(func, params)
                    scan._sequence_usage(func, params)
                except Exception:  # noqa: BLE001 - an unreadable signature: as it was
                    continue
                if params and params[0].use in ("mapping", "object"):
                    # read by key (or attribute) in the block it is handed to (nnue-trainer's input planes read
                    # ``data["board_input"]`` for the model's ``self.input_plane(data)``)
                    q.update(use=params[0].use, attrs=params[0].attrs)
                    break
                if params and params[0].use == "sequence" and params[0].length >= 2:
                    q.update(use="sequence", length=params[0].length, nested=params[0].nested)
                    break
        out.append(q)
    return out


def _handed_functions(model, attr: str, hops: int = 3):
    """The functions (parsed) an argument handed to ``self.<attr>(arg, ...)`` reaches as their first argument: a
    block of the project's own (its forward), or a method of the model (``self.get_feature_sum(data)``), followed to
    the block or method it hands its own first argument to first, ``hops`` deep."""
    import ast
    import inspect
    import textwrap

    import torch

    from mindport.discovery.scan import self_calls

    owner = model
    for _ in range(hops):
        sub = getattr(owner, attr, None)
        if isinstance(sub, torch.nn.Module):
            if type(sub).__module__.split(".")[0] in ("torch", "einops"):
                return
            owner, code = sub, type(sub).forward
        elif inspect.ismethod(sub) and isinstance(sub.__self__, torch.nn.Module):
            code = sub.__func__
        else:
            return
        try:
            func = ast.parse(textwrap.dedent(inspect.getsource(code))).body[0]
        except (OSError, TypeError, SyntaxError, IndexError):
            return
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or len(func.args.args) < 2:
            return
        yield func
        first = func.args.args[1].arg
        attr = next((a for a, args in self_calls(func) if args and isinstance(args[0], ast.Name)
                     and args[0].id == first), None)
        if attr is None:
            return


def _unpacked_forms(dims: list[str], rest: str, length: int, nested: list | None = None) -> list[list[str]]:
    """Element forms for a forward argument unpacked into ``length`` tensors (``pixels, mask = input``: a pixel-set
    encoder's ``(B x N x C pixels, B x N mask)``): the first the argument's tensor form, each other one a mask of
    ones over the first's positions (its shape without the feature axis: the last, then the one before it for a
    channel-first ``B x C x N``), then all of the first's form. The batch is not the tuple's length: a forward that
    also takes a nested form tells them apart by ``len(a) == 2`` (PSE's ``((pixels, mask), extra)``), which a batch
    of 2 would pass."""
    batch = int(dims[0])
    if batch == length:
        batch = length + 1
    first = [str(batch), *dims[1:]]
    # the features last (``B x N x C``), then before the positions (``B x C x N``: a set encoder that transposes
    # before its Linear, PSE's pixel sets)
    variants = [first] + ([[*first[:-2], first[-1], first[-2]]] if len(first) >= 3 and first[-1] != first[-2] else [])
    # and as a series (B x T x ...: a step axis after the batch, a sequence of sets)
    variants += [[v[0], "4", *v[1:]] for v in variants if len(v) == 3]
    pairs, out = [], []
    for shape in variants:
        spec = "x".join(shape) + ":" + rest
        channel_first = len(shape) >= 3 and shape[-2] == dims[-1] and shape[-1] != dims[-1]
        axis = len(shape) - 2 if channel_first else len(shape) - 1  # the feature axis
        mask = "x".join(shape[:axis] + shape[axis + 1:]) + ":float32:1:1"
        pairs.append((shape, spec, mask, axis))
        out.append([spec, *[mask] * (length - 1)])
    if nested and length == 2 and nested[0] == 2 and not nested[1]:
        # the first item a (tensor, mask) pair, the second a feature vector joined to the model's features (PSE's
        # ``((pixels, mask), extra)``; its width is corrected from the Linear's complaint: ``_joined_width_hint``),
        # first: the forward unpacks the first item again when it is a pair
        out[:0] = [[f"[{spec}, {mask}]", "x".join((shape[:-2] if len(shape) >= 3 else shape[:1]) + ["16"])
                    + ":float32"] for shape, spec, mask, axis in pairs]
    return out  # (then copies of the argument's form: sequence_inputs)


# a Linear's refusal: (the features it got, the features it takes) of "mat1 and mat2 shapes cannot be multiplied
# (3x144 and 132x128)"; a recurrent layer's: (the size it takes, the size it got) of "input.size(-1) must be equal to
# input_size. Expected 35, got 70"
_MATMUL_WIDTHS = re.compile(r"mat1 and mat2 shapes cannot be multiplied \(\d+x(\d+) and (\d+)x\d+\)")
# a tensordot of the input's last axis with a parameter of the model (xynn's AutoInt attention layer:
# ``torch.tensordot(x, self.W_q, dims=([-1], [0]))``): (the size it got, the size the parameter has), as a Linear's
_TENSORDOT_WIDTHS = re.compile(r"contracted dimensions need to match, but first has size (\d+) in dim -1 and second "
                               r"has size (\d+) in dim 0")
_RNN_WIDTHS = re.compile(r"input\.size\(-1\) must be equal to input_size\. Expected (\d+), got (\d+)")
# a LayerNorm first after the join (cal-ql's Q-function: ``cat([observations, actions], -1)`` into a network that
# normalises first)
_NORM_WIDTHS = re.compile(r"Given normalized_shape=\[(\d+)\], expected input with shape \[\*, \d+\], but got input of "
                          r"size\s*\[(?:\d+, )*(\d+)\]")


def _joined_width_hint(problem: str, spec: str) -> str | None:
    """A list input whose last item is a feature vector (``B x F``) the model joins to its own features before a
    Linear (PSE's ``extra``): F corrected by what the Linear's complaint says is missing ("mat1 and mat2 shapes cannot
    be multiplied (3x144 and 132x128)" with F = 16 -> F = 4); None otherwise."""
    m = _MATMUL_WIDTHS.search(problem)
    last = re.search(r"(\d+(?:x\d+)*)x(\d+):float32\]$", spec)
    if m is None or last is None or not spec.startswith("["):
        return None
    width = int(last.group(2)) + int(m.group(2)) - int(m.group(1))
    if int(m.group(1)) <= int(last.group(2)):  # the vector is not part of what the Linear was given (the first layer's
        return None  # complaint about the tensor item: "30x8 and 10x32" beside a 16-wide vector)
    if width <= 0 or width == int(last.group(2)):
        return None
    return spec[:last.start()] + f"{last.group(1)}x{width}:float32]"


def _late_join_hints(problem: str, specs: list[str], culprits: set) -> list[list[str]]:
    """The inputs with a later argument at the width a Linear's complaint leaves missing, when the forward joins that
    argument to what its layers made of the first one (a DDPG critic's ``cat([relu(linear1(x)), a], 1)`` before
    ``Linear(1024 + action_dim, 512)``: "mat1 and mat2 shapes cannot be multiplied (2x1026 and 1040x512)" with ``a``
    2 wide -> 16). Only when the refusing layer was handed none of the arguments as given (``culprits``: the join made
    a new tensor) and for a float argument of rank 2 or more narrower than what the layer got; one retry per such
    argument, the earliest first."""
    m = _MATMUL_WIDTHS.search(problem or "")
    if m is None or culprits or len(specs) < 2:
        return []
    got, wanted = int(m.group(1)), int(m.group(2))
    out = []
    for i, spec in enumerate(specs[1:], 1):
        shape, sep, rest = spec.partition(":")
        if not re.fullmatch(r"\d+(x\d+)+", shape) or not rest.startswith("float"):
            continue
        dims = shape.split("x")
        width = int(dims[-1]) + wanted - got
        if int(dims[-1]) < got and width > 0:
            out.append([*specs[:i], "x".join([*dims[:-1], str(width)]) + sep + rest, *specs[i + 1:]])
    return out


def sized_inputs(model, fwd_params: list[dict], tries: list[list[str]]) -> list[list[str]]:
    """The first tries with each array argument at the sizes its forward asserts (scan.py's ``_asserted_sizes``:
    ``assert x.size(1) == 2``): the axis set to that size and, for an axis at or past the form's last (a pair of
    embeddings ``2 x 2 x 16`` for a layer that takes ``2 x 16``), that size inserted there. A size the model keeps
    (``"self.n_ctx"``) is the built model's attribute when that is a positive int, else not used."""
    required = [p for p in fwd_params if p["default"] is None and p["kind"] == "positional"]
    if not any(p.get("sizes") for p in required):
        return []

    def resolved(sizes):
        out = []
        for axis, size in sizes:
            multiple = isinstance(size, str) and size.startswith("%")
            if multiple:  # an axis the forward divides by a number of the model's: a multiple of it
                size = _model_number(model, size[1:])
            elif isinstance(size, str):
                size = getattr(model, size[len("self."):], None) if size.startswith("self.") else None
            if type(size) is int and size > 0:
                out.append([axis, size, multiple])
        return out

    required = [dict(p, sizes=resolved(p.get("sizes") or [])) for p in required]
    if not any(p["sizes"] for p in required):
        return []
    out = []
    for template in [t for t in tries if len(t) == len(required)][:4]:
        options = []
        for p, spec in zip(required, template):
            shape, _, rest = spec.partition(":")
            if not p.get("sizes") or not re.fullmatch(r"\d+(x\d+)*", shape):
                options.append([spec])
                continue
            forms = []
            for insert in (False, True):
                dims = shape.split("x")
                for axis, size, multiple in sorted(p["sizes"], key=lambda s: s[0] if s[0] >= 0 else 1 << 10):
                    n = len(dims)
                    if multiple:  # kept when it is one already (the form's own size), else the number itself
                        if not insert and -n <= axis < n and int(dims[axis]) % size:
                            dims[axis] = str(size)
                    elif insert and n - 1 <= axis <= n:
                        dims.insert(axis, str(size))
                    elif -n <= axis < n:
                        dims[axis] = str(size)
                    else:
                        dims = None
                        break
                form = "x".join(dims) + ":" + rest if dims else None
                if form and form != spec and form not in forms:
                    forms.append(form)
            options.append(forms or [spec])
        for combo in itertools.product(*options):
            if list(combo) != template and list(combo) not in out:
                out.append(list(combo))
    return out[:8]


def _model_number(model, text: str) -> int | None:
    """The value of scan.py's ``_model_number`` expression (``self.bs ** 2``) on the built model: ints only, None
    when an attribute is missing or no int."""
    import ast

    def value(node):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            v = getattr(model, node.attr, None)
            return v if type(v) is int else None
        if isinstance(node, ast.BinOp):
            a, b = value(node.left), value(node.right)
            if a is None or b is None:
                return None
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Pow) and 0 <= b <= 8:
                return a ** b
        return None

    try:
        return value(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError):
        return None


def mapping_inputs(fwd_params: list[dict], tries: list[list[str]]) -> list[list[str]]:
    """Input spec lists that give a dict to each forward argument the forward reads by key (scan.py's
    ``_mapping_usage``: ``batch["image"]``), the other arguments as in the first of ``tries``: one key (each in turn,
    first read first) gets the argument's tensor form (the first layer's), the others the form their name asks for
    (``_extra_inputs``: a mask, lengths, a time step), else the same form."""
    required = [p for p in fwd_params if p["default"] is None and p["kind"] == "positional"]
    maps = [i for i, p in enumerate(required) if p.get("use") in ("mapping", "object") and p.get("attrs")]
    templates = [t for t in tries if len(t) == len(required)][:3]
    out = []
    for template in templates:
        for i in maps:
            keys = list(required[i]["attrs"])
            spec = template[i]
            if not re.fullmatch(r"\d+(x\d+)*:.*", spec):
                continue
            kind = "obj" if required[i].get("use") == "object" else ""  # read by attribute: obj{x: ..., ...}
            for lead in keys[:3]:
                form = {k: spec if k == lead else _extra_inputs(k.lower(), spec, 0)[0] for k in keys}
                out.append([*template[:i], kind + "{" + ", ".join(f"{k}: {v}" for k, v in form.items()) + "}",
                            *template[i + 1:]])
    return [list(t) for t in dict.fromkeys(map(tuple, out))][:9]


def _layer_specs(first) -> list[str]:
    """The input forms a layer takes (its batch of 2, a few lengths or sizes)."""
    import torch.nn as nn

    specs: list[str] = []
    if first is None:
        pass
    elif isinstance(first, (nn.Conv1d, nn.ConvTranspose1d)):
        c = first.in_channels  # channels first, then channels last (a model that transposes before its conv)
        specs = [f"2x{c}x32:float32", f"2x{c}x256:float32", f"2x32x{c}:float32"]
    elif isinstance(first, nn.ConvTranspose2d) and tuple(first.stride) == (1, 1) and tuple(first.padding) == (0, 0) \
            and first.kernel_size[0] > 1:
        # a generator's projection of its latent (DCGAN: ConvTranspose2d(z_dim, 8f, 4, 1, 0) makes 4 x 4 of a
        # 1 x 1 code; at 32 x 32 the code made 512 x 512 images, or refused a label plane joined at 1 x 1:
        # quickgrid/paper-implementations' conditional WGAN), then the image forms
        c = first.in_channels
        specs = [f"2x{c}x1x1:float32", f"2x{c}x32x32:float32", f"2x{c}x64x64:float32"]
    elif isinstance(first, (nn.Conv2d, nn.ConvTranspose2d)):
        c = first.in_channels
        # 84 x 84: Atari frames (DQN-family heads flatten to 64 * 7 * 7); channels last (B x H x W x C, or a graph's
        # B x nodes x T x C permuted before the convolution: STGCN)
        # 28 x 28 for one channel: the grayscale digit sets (MNIST, Fashion-MNIST, EMNIST), after 32 x 32 (a capsule
        # network fixes its primary capsules at 32 * 6 * 6, what a 28 x 28 digit leaves: adambielski/CapsNet-pytorch)
        specs = [f"2x{c}x32x32:float32", *([f"2x{c}x28x28:float32"] if c == 1 else []), f"2x{c}x64x64:float32",
                 f"2x{c}x84x84:float32", f"1x{c}x224x224:float32", f"1x{c}x299x299:float32", f"2x16x32x{c}:float32"]
    elif isinstance(first, (nn.Conv3d, nn.ConvTranspose3d)):
        c = first.in_channels
        specs = [f"1x{c}x8x32x32:float32", f"1x{c}x16x64x64:float32", f"1x{c}x16x112x112:float32"]
    elif isinstance(first, nn.Linear):
        f = first.in_features
        specs = [f"2x{f}:float32", f"2x8x{f}:float32"]
    elif isinstance(first, (nn.Embedding, nn.EmbeddingBag)):
        n = first.num_embeddings
        specs = [f"2x16:int64:0:{n}", f"2x8:int64:0:{n}", f"16:int64:0:{n}"]
    elif isinstance(first, nn.RNNBase):
        f = first.input_size
        specs = [f"2x8x{f}:float32"] if first.batch_first else [f"8x2x{f}:float32", f"2x8x{f}:float32"]
    elif isinstance(first, nn.LayerNorm):
        shape = "x".join(map(str, first.normalized_shape))
        specs = [f"2x16x{shape}:float32", f"2x{shape}:float32"]
    elif isinstance(first, nn.modules.batchnorm._BatchNorm):
        c = first.num_features
        specs = {"BatchNorm1d": [f"2x{c}:float32", f"2x{c}x16:float32"], "BatchNorm2d": [f"2x{c}x32x32:float32"],
                 "BatchNorm3d": [f"1x{c}x8x16x16:float32"]}.get(type(first).__name__, [])
    elif first is not None and isinstance(first, nn.GroupNorm):
        c = first.num_channels
        specs = [f"2x{c}x32x32:float32", f"2x{c}x32:float32"]
    return specs


def _unfold_specs(model, unfold) -> list[str]:
    """Images for a model that unfolds its input into patches first (T2T-ViT's ``soft_split0 = nn.Unfold(kernel_size=
    (7, 7), ...)``, then a Linear over a patch's ``C * 7 * 7`` values): ``C`` from the first Linear whose width is a
    multiple of the kernel's area (3 when none is), at a few sizes."""
    import torch.nn as nn

    kernel = unfold.kernel_size if isinstance(unfold.kernel_size, tuple) else (unfold.kernel_size,) * 2
    area = kernel[0] * kernel[-1]
    c = next((m.in_features // area for m in model.modules()
              if isinstance(m, nn.Linear) and m.in_features % area == 0), 3)
    return [f"2x{c}x32x32:float32", f"2x{c}x64x64:float32", f"1x{c}x224x224:float32"]


def _to_rank(spec: str, rank: int, channels_first: bool | None) -> list[str]:
    """Forms of ``rank`` dimensions for the input a layer takes as ``spec`` (the forward reads ``B, N, C = x.shape``
    and reshapes before its first layer, or the layer is met later): integer tokens as ``2 x 16 ...``; features
    kept last (``2 x 16 x F``: 16 tokens, a 4 x 4 grid) and, for a channel-first layer (``channels_first``; None:
    either), also second (``2 x C x 16 x 16``)."""
    shape, _, rest = spec.partition(":")
    dims = shape.split("x")
    if len(dims) == rank:
        return [spec]
    if rest.startswith("int"):
        tokens = ["x".join(["2", *["16"] * (rank - 1)]) + ":" + rest] if rank > 1 else [f"16:{rest}"]
        # then features of that rank: an input guessed as tokens because the first layer met is an Embedding, which
        # the forward reads as a table (a VQ-VAE's codebook: ``inputs.permute(0, 2, 3, 1)`` of a latent image, then
        # distances to ``self.embedding.weight``: "input.dim() = 2 is not equal to len(dims) = 4")
        return tokens + (_to_rank("2x16:float32", rank, channels_first) if rank >= 3 else [])
    feature = dims[1] if channels_first and len(dims) >= 3 else dims[-1]
    if rank == 1:
        return [f"{feature}:{rest}"]
    out = ["x".join(["2", *["16"] * (rank - 2), feature]) + ":" + rest]
    if channels_first is not False and rank >= 3:
        out.insert(0 if channels_first else 1, "x".join(["2", feature, *["16"] * (rank - 2)]) + ":" + rest)
    if channels_first is not False and len(dims) == 4 and rank == 5:
        # a series of images (B x T x C x H x W) for a model whose first layer is a 2-D convolution applied per
        # frame (``x.view(B * T, C, H, W)``: satellite time series, U-TAE; video per-frame encoders), first
        # (small frames first: a recurrent stack keeps its state at a frame size of its own, ``_SPATIAL_SIZE``)
        out[:0] = list(dict.fromkeys("x".join([dims[0], "4", dims[1], *sides]) + ":" + rest
                                     for sides in (["16", "16"], dims[2:])))
    return out


def _argument_inputs(param: dict, spec: str) -> list[str]:
    """The forms tried for a forward argument after the first (``spec``: the first input's). A Python value first
    when the annotation or the forward's use says it is one (scan.py's ``_forward_usage``): a function returning its
    argument for a callable (``sublayer(x)``), the strings it is compared with (``if mode == 'norm'``), False then
    True for a flag, a number for a size or a compared number (``H, W`` of ``x.view(B, H, W, C)``: the token grid of
    the first input; ``if t == 0``: 0); None after the arrays for an argument only compared with None. Otherwise the
    arrays of ``_extra_inputs``."""
    low = param["name"].lower()
    ann = (param.get("annotation") or "").replace(" ", "").replace("typing.", "")
    use, choices = param.get("use", ""), param.get("choices") or []
    arrays = _extra_inputs(low, spec, param.get("rank", 0))
    if use == "callable" or ann.startswith(("Callable", "callable")):
        return ["fn:identity"]
    strings = [c for c in choices if isinstance(c, str)]
    if strings:
        return [f"value:{c!r}" for c in strings[:2]]
    if ann == "bool" or use == "flag":
        return ["value:False", "value:True"]
    grid = _grid_value(low, spec)
    if grid is not None and not ann and use != "sequence":
        # forward(x, H, W) handing H and W on to its layers (PVT's Mlp -> DWConv: x.view(B, C, H, W)), no use of its
        # own that says a number: named like the first input's height or width, its grid first, arrays after
        return [f"value:{grid!r}", *arrays]
    if ann in ("int", "float") or use == "number":
        numbers = [c for c in choices if type(c) in (int, float)]
        grid = _grid_value(low, spec)
        value = grid if grid is not None else numbers[0] if numbers else 1.0 if ann == "float" else int(
            small_value(low, "int") or 16)
        return [f"value:{value!r}", *(arrays if not ann else [])]
    if use == "optional" or ann.startswith("Optional") or ann.endswith("|None"):
        return [*arrays, "value:None"]
    return arrays


def number_inputs(fwd_params: list[dict]) -> list[list[str]]:
    """Inputs for a forward whose first argument is a number (scan.py's ``_first_number``: lucidrains'
    ``DynamicPositionBias.forward(i, j)`` hands ``j - i`` and ``j`` to ``torch.arange``; tensors of every form were
    refused: "Boolean value of Tensor with more than one value is ambiguous"): that number (the small value of its
    name, at least 1, else 16), the arguments after it as ``_argument_inputs`` forms them; [] otherwise."""
    required = [p for p in fwd_params if p["default"] is None and p["kind"] == "positional"]
    if not required or required[0].get("use") != "number":
        return []
    guess = small_value(required[0]["name"], "int") or "16"
    first = int(guess) if re.fullmatch(r"\d+", guess) and int(guess) >= 1 else 16
    rest = [_argument_inputs(p, f"2x{first}:float32") for p in required[1:]]
    if any(not r for r in rest):
        return []
    return [[f"value:{first}", *(r[0] for r in rest)]]


_INTEGER_ANNOTATION = re.compile(r"(torch\.)?(LongTensor|IntTensor|ShortTensor|ByteTensor)")
_TIME_STEP = ("t", "time", "times", "timestep", "timesteps", "step", "steps", "noise_step", "noise_steps")


def integer_inputs(fwd_params: list[dict]) -> tuple[list[list[str]], list[list[str]]]:
    """(by annotation, by name) inputs for a forward whose first argument is an integer tensor: annotated as one
    (``t: torch.LongTensor``: quickgrid/paper-implementations' diffusion ``PositionalEncoding`` indexes its table with
    it, and every float form was refused: "tensors used as indices must be long"), or named as a time step; a batch
    of 2 steps below 10, the arguments after it as ``_argument_inputs`` forms them."""
    required = [p for p in fwd_params if p["default"] is None and p["kind"] == "positional"]
    if not required or required[0].get("use") == "number":
        return [], []
    first = required[0]
    by_annotation = bool(_INTEGER_ANNOTATION.fullmatch((first.get("annotation") or "").replace(" ", "")))
    if not by_annotation and first["name"] not in _TIME_STEP:
        return [], []
    rest = [_argument_inputs(p, "2x16:float32") for p in required[1:]]
    if any(not r for r in rest):
        return [], []
    found = [[form, *(r[0] for r in rest)] for form in ("2:int64:0:10", "2x1:int64:0:10")]
    return (found, []) if by_annotation else ([], found)


def _grid_value(name: str, spec: str) -> int | None:
    """A height or width argument that goes with the first input (``forward(x, H, W)`` of a token block): its token
    grid (``2 x 16 x C``: 4 x 4; a token count that is no square: N x 1), or its spatial size (``B x C x H x W``)."""
    height = re.fullmatch(r"(img_|feat_|x_)?(h|height|hh|nh|h_?size)", name)
    width = re.fullmatch(r"(img_|feat_|x_)?(w|width|ww|nw|w_?size)", name)
    if not (height or width):
        return None
    dims = [int(v) for v in spec.split(":")[0].split("x")]
    if len(dims) == 4:
        return dims[2] if height else dims[3]
    if len(dims) == 3:
        side = int(round(dims[1] ** 0.5))
        if side * side == dims[1]:
            return side
        return dims[1] if height else 1
    return None


# a graph's (normalised) adjacency or Laplacian under another name than adj: A_hat, A_wave, adj_norm, norm_adj, L_hat
_DENSE_GRAPHS = re.compile(r"(a|adj|adjacency|g)_?(hat|wave|tilde|norm|normalized|normalised|sym)|"
                           r"norm(alized|alised)?_?(adj|a|adjacency)|laplacian|lap|l_?(hat|tilde|norm)|adj_?(s|list)?")


def _extra_inputs(name: str, spec: str, rank: int = 0) -> list[str]:
    """The forms tried for a forward argument after the first, from its name and the first input's spec: a time step,
    a dense graph (or a sparse one: ``edge_index``, 2 x E node indices), a mask of ones (channel-first ``B x 1 x T``
    for a ``B x C x T`` input, else ``B x T``), lengths (every sequence whole), else the first input's form again
    (at the argument's own ``rank`` when the forward reads one: ``B, S, H, D = values.shape``)."""
    dims = spec.split(":")[0].split("x")
    batch = dims[0]
    if name in ("t", "time", "times", "timestep", "timesteps", "noise_level", "sigma", "sigmas", "step"):
        return [f"{batch}:int64:0:10"]
    if name in ("noise_labels", "noise_label", "noise_cond", "c_noise"):  # a diffusion model's noise level: floats
        return [f"{batch}:float32:0.1:1", f"{batch}:int64:0:10"]
    if name in ("adj", "adjacency", "a", "adj_matrix", "graph") or _DENSE_GRAPHS.fullmatch(name):
        # a dense graph over the first axis; over the nodes of a batch x nodes x ... input (STGCN's forward(X, A_hat),
        # X batch x nodes x time x features: Coolgiserz/ST-GCN, given X's form, "expected input[2, 32, 16, 32] to
        # have 16 channels"), one per sample after
        if len(dims) >= 3:
            return [f"{dims[1]}x{dims[1]}:float32", f"{batch}x{dims[1]}x{dims[1]}:float32", f"{batch}x{batch}:float32"]
        return [f"{batch}x{batch}:float32"]
    if name in ("adj_mat", "adj_mask", "attn_adj"):  # per head too (GATv2: N x N x 1, broadcast over its heads)
        return [f"{batch}x{batch}x1:float32:1:1", f"{batch}x{batch}:float32:1:1"]
    if re.fullmatch(r"edge_?ind(ex|ices|exes)|edges?_?idx|edges|edge_list", name):
        # a sparse graph over the first axis's nodes (PyG's convention): 2 x E node indices, four edges per node
        return [f"2x{4 * int(batch)}:int64:0:{batch}"]
    if len(dims) == 2 and not spec.split(":")[1].startswith("int"):
        # beside N x D nodes, what an edge carries: one row per edge, as many as the edge indices above hold
        # (zengkaipeng/UAlign's SparseEdgeUpdateLayer.forward(node_feats, edge_feats, edge_index): given the nodes'
        # form, "Sizes of tensors must match ... Expected size 8 but got size 2"); a weight, one value per edge
        edges = 4 * int(batch)
        if re.fullmatch(r"edge_?(weights?|w|norm|vals?|values?|scores?)", name):
            return [f"{edges}:float32", f"{edges}x1:float32", spec]
        if re.fullmatch(r"edge_?(attrs?|attributes?|feats?|features?|fea|embs?|embeddings?|h|hidden|reprs?|x|"
                        r"inputs?|states?|vecs?|data)|e_?(attrs?|feats?|h)", name):
            return [f"{edges}x{dims[-1]}:float32", spec]
    if re.fullmatch(r"(\w+_)?(cache|caches|kv_cache|layer_past|past|past_key_values?|incremental_state)", name):
        # a decoding cache the forward fills as it goes (``if i not in cache: cache[i] = {}``, tunz/transformer-
        # pytorch's Decoder: "can't assign a dict to a torch.FloatTensor" for a tensor there): none, a full pass
        return ["value:None", spec]
    if "mask" in name:
        if len(dims) == 3:
            return [f"{batch}x1x{dims[2]}:float32:1:1", f"{batch}x{dims[1]}:float32:1:1"]
        if len(dims) == 2 and spec.split(":")[1].startswith("int"):  # tokens
            return [f"{batch}x{dims[1]}:float32:1:1", f"{batch}x1x{dims[1]}:float32:1:1"]
        return [f"{batch}x{dims[-1]}:float32:1:1"]
    if re.search(r"(^|_)(lengths?|lens?)$", name):
        length = dims[-1] if len(dims) == 3 and not spec.split(":")[1].startswith("int") else (
            dims[1] if len(dims) > 1 else dims[0])
        return [f"{batch}:int64:{length}:{length}"]
    labels = _class_labels(name, dims, spec)
    if rank and rank != len(dims):
        return [*_to_rank(spec, rank, None), spec, *labels]
    return [spec, *labels]


_LABELS = re.compile(r"(targets?|labels?|gts?|gt_labels?|y_?true|ground_?truth|class_?ids?)")


def _class_labels(name: str, dims: list[str], spec: str) -> list[str]:
    """A loss's class labels beside its predictions (``forward(self, pred, target)``: ``true_dist.scatter_(1,
    target.unsqueeze(1), ...)``, ``F.nll_loss(pred, target)``), after the first input's own form (a regression
    target): integer class ids below the predictions' class axis, one per sample (``B x C`` predictions), per position
    (``B x T x C``) or per pixel (``B x C x H x W``). None for another name or an integer first input (tokens)."""
    if not _LABELS.fullmatch(name) or not spec.split(":")[1].startswith("float"):
        return []
    if len(dims) == 2:
        return [f"{dims[0]}:int64:0:{dims[1]}"]
    if len(dims) == 3:
        return [f"{dims[0]}x{dims[1]}:int64:0:{dims[2]}"]
    if len(dims) == 4:
        return [f"{dims[0]}x{dims[2]}x{dims[3]}:int64:0:{dims[1]}"]
    return []


_RANK_HINTS = [  # an error that names the number of dimensions the input should have -> that number
    (r"not enough values to unpack \(expected (\d), got \d\)", 0),  # B, C, H, W = x.shape on a smaller input
    (r"too many values to unpack \(expected (\d)\)", 0),
    (r"Expected (\d)-D argument", 0),  # torch.outer(timesteps, freqs)
    (r"[Ee]xpected \w+ (\d)D \(batched\)|or (\d)D \(batched\) input", 0),
    (r"[Ee]xpected (\d)D input|[Ee]xpected (\d)D tensor", 0),
    (r"too many indices for tensor of dimension (\d)", 1),  # x[:, :, 0] on a 2-D input: at least one more
    (r"Dimension out of range \(expected to be in range of \[-\d+, \d+\], but got (\d)\)", 1),
    # x.permute(0, 2, 3, 1) of an input of another rank: "input.dim() = 2 is not equal to len(dims) = 4"
    (r"input\.dim\(\) = \d+ is not equal to len\(dims\) = (\d)", 0),
    # an input an einsum takes before any layer (TabSurvey's DANet masks its B x D rows with ``einsum('nd,bd->bnd',
    # mask, x)``, then convolves): its equation's subscripts for that operand
    (r"einsum\(\): the number of subscripts in the equation \((\d)\) does not match the number of dimensions", 0),
]


def _mapping_retries(problem: str, spec: str) -> list[str]:
    """A dict input spec (``{a: 2x16:float32, b: 2x16:float32}``, mapping_inputs' form; ``obj{...}`` alike) again with
    its lead key (the first holding a tensor) in the rank or size the forward's error names (``_rank_hint``,
    ``_size_hint``): first with the keys that had the lead's form as one value per sample (``B``), then keeping
    theirs; or with the key the forward's KeyError (AttributeError) names added first, in the lead's form. [] for
    nested values or when the error names neither. Specs are read and written by the parity loader's own parser."""
    from mindport.errors import InputError
    from mindport.validators.parity.loading import InputSpec, parse_input_spec

    try:
        parsed = parse_input_spec(spec)
    except InputError:
        return []
    if parsed.dtype not in ("dict", "object") or any(v.dtype in ("dict", "object", "list", "tuple")
                                                     for _, v in parsed.value):
        return []
    form = {k: str(v) for k, v in parsed.value}
    lead = next((k for k, v in parsed.value if v.shape), None)
    if lead is None:
        return []
    value = form[lead]

    def text(items: dict) -> str:
        return str(InputSpec((), parsed.dtype, value=tuple((k, parse_input_spec(v)) for k, v in items.items())))

    missing = re.search(r"KeyError: '([\w.\-]+)'|'ObjectInput' object has no attribute '(\w+)'", problem)
    missing = missing and (missing.group(1) or missing.group(2))
    if missing and missing not in form:
        # a key the forward (or a block it hands the dict to) reads that the scan did not see: it, first, in the
        # lead's form
        return [text({missing: value, **form})]
    dims = value.split(":")[0].split("x")
    rank = _rank_hint(problem, len(dims))
    news = _to_rank(value, rank, None) if rank is not None and rank != len(dims) else _size_hint(problem, value)
    out = []
    for new in news[:2]:
        alike = {k: (new if k == lead else f"{dims[0]}:float32" if v == value else v) for k, v in form.items()}
        kept = {k: (new if k == lead else v) for k, v in form.items()}
        for variant in (alike, kept):
            retry = text(variant)
            if retry not in out and retry != str(parsed):
                out.append(retry)
    return out


_DIMENSION_OUT_OF_RANGE = re.compile(r"Dimension out of range \(expected to be in range of \[-(\d+), \d+\], but got (\d+)\)")


def _derived_rank(problem: str, given: int) -> int | None:
    """The rank an input of ``given`` dimensions should have when the forward's "Dimension out of range" is about a
    tensor it made with fewer axes than its input (a loss's ``pred[:, i].sum(dim=1).sum(dim=1).sum(dim=1)``, a
    Dice loss over 5-D volumes: given 2-D, the selected channel is 1-D, "expected to be in range of [-1, 0], but got
    1"): the input as many axes longer as the tensor lacked. One reduction fails at a time, so the caller grows the
    input step by step (lee-zq/3DUNet-Pytorch's six Dice/Jaccard/Tversky losses: 2 -> 3 -> 4 -> 5). None otherwise
    (the input itself short: ``_rank_hint``)."""
    m = _DIMENSION_OUT_OF_RANGE.search(problem)
    if m is None or int(m.group(1)) >= given:
        return None
    rank = given + int(m.group(2)) + 1 - int(m.group(1))
    return rank if given < rank <= 6 else None


def _rank_hint(problem: str, given: int | None = None) -> int | None:
    """The rank an input should have, when the forward's error says (None otherwise): "not enough values to unpack
    (expected 4, got 2)" -> 4, "Expected 1-D argument" -> 1, "too many indices for tensor of dimension 2" -> 3. A
    recurrent layer's "Expected input to be 2D or 3D, got 4D instead" for an input of ``given`` dimensions is about
    what the forward made of it (``self.rnn(x[None, :])``: one axis added): the input that many axes fewer."""
    m = re.search(r"Expected input to be \d+D or (\d+)D, got (\d+)D instead", problem)
    if m is not None and given is not None:
        rank = given - (int(m.group(2)) - int(m.group(1)))
        return rank if 1 <= rank < given else None
    # an einops pattern the input did not fit: the axes its left side names ("b groups n d -> (b groups) n d": 4;
    # Raumberg/crop-circles' BAModule rearranges its input first, its first layer a Linear: given 2 x 512 and
    # 2 x 8 x 512, each refused); none for a pattern with an ellipsis, which takes any rank above its axes
    m = re.search(r'Error while processing [\w-]+ pattern "([^"]*?)\s*->', problem)
    if m is not None and "..." not in m.group(1) and "\u2026" not in m.group(1):
        rank = len(re.findall(r"\([^)]*\)|[^\s()]+", m.group(1)))
        return rank if 1 <= rank <= 6 and rank != given else None
    # the same of a convolution, which names what it got: "Expected 3D (unbatched) or 4D (batched) input to
    # conv_transpose2d, but got input of size: [2, 1, 16, 1, 1]" after ``z.unsqueeze(-1).unsqueeze(-1)`` of a 3-D z
    m = re.search(r"or (\d)D \(batched\) input to \w+, but got input of size: \[([\d, ]*)\]", problem)
    if m is not None and given is not None:
        got = len([v for v in m.group(2).split(",") if v.strip()])
        rank = given - (got - int(m.group(1)))
        if got != given and 1 <= rank <= 6 and rank != given:
            return rank
    # ``b, c, h, w, block = *x.shape, self.block`` on a 2-D input: "expected 5, got 3": the input is as many axes
    # short as the unpack (lucidrains' HaloAttention, 8 names for 4 axes and 4 attributes, was given rank 8)
    m = re.search(r"not enough values to unpack \(expected (\d+), got (\d+)\)", problem)
    if m is not None and given is not None:
        rank = given + int(m.group(1)) - int(m.group(2))
        return rank if 1 <= rank <= 6 else None
    for pattern, extra in _RANK_HINTS:
        m = re.search(pattern, problem)
        if m:
            rank = int(next(g for g in m.groups() if g)) + extra
            return rank if 1 <= rank <= 6 else None
    return None


# a convolution's refusal of its input: the channels it wanted and got, and the input's shape as it met it
_CONV_CHANNELS = re.compile(r"to have (\d+) channels, but got (\d+) channels")
_CONV_INPUT = re.compile(r"expected input\[([\d, ]+)\] to have")


def _size_hint(problem: str, spec: str) -> list[str]:
    """The input ``spec`` with its channels (or features) scaled as the forward's error says, when the model splits or
    joins its input before the layer that refused it: "expected input[2, 8, 32, 32] to have 16 channels, but got 8"
    (ShuffleNet's blocks take twice the channels of their branch) -> channels x 2; "mat1 and mat2 shapes cannot be
    multiplied (2x64 and 32x400)" (BCQ's actor joins state and action) -> features / 2. [] otherwise."""
    shape, _, rest = spec.partition(":")
    dims = [int(v) for v in shape.split("x")]
    longer = _length_hint(problem, dims, rest) or _receptive_field_hint(problem, dims, rest) \
        or _fixed_length_hint(problem, dims, rest) or _view_hint(problem, dims, rest) \
        or _permuted_hint(problem, dims, rest) or _grown_hint(problem, dims, rest) or _id_range_hint(problem, dims, rest) \
        or _built_axis_hint(problem, dims, rest)
    if longer:
        return longer
    m = _CONV_CHANNELS.search(problem)
    axis = 1
    seen = _CONV_INPUT.search(problem)
    if m is not None and seen is not None and len(dims) == len(seen.group(1).split(",")) + 1:
        axis = 2  # a series of frames (B x T x C x H x W) the model folds into its batch before the convolution
    if m is None:
        m = _MATMUL_WIDTHS.search(problem) or _TENSORDOT_WIDTHS.search(problem)
        m = m and re.match(r"(\d+) (\d+)", f"{m.group(2)} {m.group(1)}")  # wanted, got
        axis = len(dims) - 1
    if m is None or len(dims) < 2 or rest.startswith("int"):
        return []
    wanted, got = int(m.group(1)), int(m.group(2))
    size = dims[axis] * wanted
    if not got or size % got or size // got < 1 or size // got == dims[axis]:
        # not a multiple: the layer takes the input joined with a state of its own (a recurrent cell's
        # ``conv(cat([x, h]))``: in + hidden channels): the input short by the difference
        if axis != len(dims) - 1 and 0 < dims[axis] - (got - wanted) != dims[axis]:
            dims[axis] -= got - wanted
            return ["x".join(map(str, dims)) + ":" + rest]
        return _moved_channels_hint(dims, rest, wanted, got) if axis == len(dims) - 1 else []
    dims[axis] = size // got
    return ["x".join(map(str, dims)) + ":" + rest]


def _grown_hint(problem: str, dims: list[int], rest: str) -> list[str]:
    """The input with its trailing (spatial, temporal) axes grown by the factor a kernel says they fell short by,
    when a deep stack of strides leaves a layer less than its kernel: "input image (T: 2 H: 4 W: 4) smaller than
    kernel size (kT: 1 kH: 7 kW: 7)" (MRzzm/action-recognition-models-pytorch's Res3D at 16 x 112 x 112 frames: H and
    W x 2), "Calculated padded input size per channel: (2 x 2). Kernel size: (4 x 4)". [] otherwise, or for an
    integer input."""
    if rest.startswith("int"):
        return []
    m = re.search(r"input image \(T: (\d+) H: (\d+) W: (\d+)\) smaller than kernel size \(kT: (\d+) kH: (\d+) "
                  r"kW: (\d+)\)", problem)
    norm = re.search(r"Expected more than 1 spatial element when training, got input size torch\.Size\(\[([\d, ]+)\]\)",
                     problem) if m is None else None
    if m is not None:
        have, want = [int(v) for v in m.groups()[:3]], [int(v) for v in m.groups()[3:]]
    elif norm is not None:
        # an InstanceNorm (statistics of each sample's own plane, in eval too) met at 1 x 1: a pix2pix U-Net's eight
        # stride-2 steps need 256 x 256 (GodWriter/GAN-Pytorch); x 4, as a stride's floor loses part of the x 2
        have = [int(v) for v in norm.group(1).split(",")][2:]
        want = [4 * h for h in have]
    else:
        m = re.search(r"Calculated padded input size per channel: \(([\d x]+)\)\. Kernel size: \(([\d x]+)\)", problem)
        if m is None:
            return _pooled_away_hint(problem, dims, rest)
        have, want = [[int(v) for v in g.split("x")] for g in m.groups()]
    if len(have) != len(want) or len(dims) < len(have) + 2 or not all(have):
        return []
    out = list(dims)
    for i, (h, w) in enumerate(zip(have, want), start=len(dims) - len(have)):
        if w > h:
            out[i] = dims[i] * -(-w // h)
    return _changed_form(out, dims, rest)


_POOLED_AWAY = re.compile(r"Given input size: \(\d+(?:x\d+)+\)\. Calculated output size: \(\d+((?:x\d+)+)\)\. "
                          r"Output size is too small")


def _pooled_away_hint(problem: str, dims: list[int], rest: str) -> list[str]:
    """The input with its spatial axes x 4, when a pooling deep in a stack of strides got less than its window
    ("Given input size: (16x1x2). Calculated output size: (16x0x1). Output size is too small": princeton-vl's stacked
    hourglass, four halvings per hourglass after a stride-4 stem, needs 64 x 64). The spatial axes: every axis but
    the batch and the channels, the channels the smallest axis, first or last (a channels-last image the forward
    permutes, B x H x W x C, as that hourglass takes it). [] for an integer input or an input of rank < 3."""
    m = _POOLED_AWAY.search(problem)
    if m is None or rest.startswith("int") or len(dims) < 3:
        return []
    channels = 1 if dims[1] <= dims[-1] else len(dims) - 1
    return _changed_form([v * 4 if i not in (0, channels) else v for i, v in enumerate(dims)], dims, rest)


def _permuted_hint(problem: str, dims: list[int], rest: str) -> list[str]:
    """The input with two axes swapped, when the forward permutes it before a recurrent layer that got one axis where
    it wanted the other's size: ``x.permute(0, 2, 1)`` of a (B, 1, T) signal before ``LSTM(input_size=1,
    batch_first=True)`` refuses 2 x 8 x 1 ("input.size(-1) must be equal to input_size. Expected 1, got 8") and takes
    2 x 1 x 8. [] when the two sizes are not both on non-batch axes of the input."""
    m = _RNN_WIDTHS.search(problem)
    conv = _CONV_CHANNELS.search(problem) if m is None else None
    if conv is not None and not rest.startswith("int") and 3 <= len(dims) <= 5:
        # a (B, L, C) series the forward moves channels-first before its first convolution (time-series
        # embeddings: ``self.conv(x.permute(0, 2, 1))``): given C on axis 1 (2 x 16 x 32 for c_in=16), the
        # convolution got the last axis ("expected input[2, 32, 18] to have 16 channels, but got 32"): the two swapped.
        # So too a channels-last (B, T, N, C) field (imethanlee/STGCN's ``x.permute(0, 3, 2, 1)`` before Conv2d), when
        # the convolution got the input's own sizes in another order (not a join's: a UNet's skip, more channels)
        wanted, got = int(conv.group(1)), int(conv.group(2))
        seen = _CONV_INPUT.search(problem)
        moved = seen is not None and sorted(int(v) for v in seen.group(1).split(",")) == sorted(dims)
        if dims[1] == wanted and dims[-1] == got and wanted != got and (len(dims) == 3 or moved):
            out = list(dims)
            out[1], out[-1] = got, wanted
            return _changed_form(out, dims, rest)
        return []
    if m is None or rest.startswith("int"):
        return []
    wanted, got = int(m.group(1)), int(m.group(2))
    if wanted not in dims[1:] or got not in dims[1:] or wanted == got:
        return []
    i, j = dims.index(wanted, 1), dims.index(got, 1)
    out = list(dims)
    out[i], out[j] = out[j], out[i]
    return _changed_form(out, dims, rest)


def _moved_channels_hint(dims: list[int], rest: str, wanted: int, got: int) -> list[str]:
    """A channels-first field the forward moves to the last axis, with a few coordinates appended, before its first
    Linear (a Fourier neural operator: ``x.permute(0, 2, 1)``, ``cat((x, grid), dim=-1)``, ``fc0 = Linear(d_in + 1,
    width)``): the Linear got an axis of the input plus ``k`` <= 3 values ("mat1 and mat2 shapes cannot be multiplied
    (4x17 and 2x64)" for 2x16x2: axis 1, 16 + 1) and wants ``wanted``, so that axis is ``wanted - k`` channels; the
    field at 32 points per spatial axis first (its spectral layers keep up to 16 modes), then at the sizes tried."""
    for axis in range(1, len(dims) - 1):
        extra = got - dims[axis]
        if 0 <= extra <= 3 and wanted - extra >= 1:
            moved = [*dims[:axis], wanted - extra, *dims[axis + 1:]]
            field = [v if i in (0, axis) else max(v, 32) for i, v in enumerate(moved)]
            return list(dict.fromkeys(_changed_form(field, dims, rest) + _changed_form(moved, dims, rest)))
    return []


def _view_hint(problem: str, dims: list[int], rest: str) -> list[str]:
    """The input in the form the forward reshapes it to, when its ``view``/``reshape`` names that form by sizes the
    constructor fixed: "shape '[2, 48, 117, 24]' is invalid for input of size 98304" (Atcold/pytorch-PPUU's encoders:
    ``x.view(bsize, n_inputs * 3, opt.height, opt.width)``, the frames 117 x 24, tried at 32 x 32) -> 2x48x117x24.
    The batch axis must agree (the view takes it from the input); a form with -1 keeps the input's axis there and
    its rank. Integer ids (embedded before the view): as many samples as the view needs. [] otherwise."""
    m = re.search(r"shape '\[([-\d, ]+)\]' is invalid for input of size (\d+)", problem)
    if m is None or not dims:
        return []
    target = [int(v) for v in m.group(1).split(",")]
    need, size = 1, int(m.group(2))
    for v in target:
        need *= v
    if rest.startswith("int"):
        # token ids embedded, then viewed at sizes the constructor fixed (a character-aware language model's
        # ``embeddings(input).view(self.batch_size * self.seq_len, 1, max_len, emb)``: "shape '[700, 1, 16, 15]' is
        # invalid for input of size 480" for 2 x 16 ids): as many samples as the view needs, each as given
        if need > 0 and size and need % size == 0 and need // size > 1 and dims[0] * need // size <= 4096:
            return _changed_form([dims[0] * need // size, *dims[1:]], dims, rest)
        return []
    if len(target) >= 2 and target[0] == -1 and all(v > 0 for v in target[1:]):
        # the batch left to the view, the rest fixed by the constructor: ``x.view(-1, self.channels, self.size *
        # self.size)`` of a diffusion UNet's self-attention (quickgrid/paper-implementations' TransformerEncoderSA,
        # tried at 2 x 16 x 128: "shape '[-1, 128, 1024]' is invalid for input of size 4096") takes an image of
        # size x size first, then the form the view names
        forms = []
        side = int(round(target[-1] ** 0.5))
        if len(target) == 3 and side * side == target[-1] and side > 1:
            forms += _changed_form([dims[0], target[1], side, side], dims, rest)
        return forms + _changed_form([dims[0], *target[1:]], dims, rest)
    if not target or target[0] != dims[0] or any(v < -1 or v == 0 for v in target) \
            or (-1 in target and len(target) != len(dims)):
        return []
    return _changed_form([d if t == -1 else t for t, d in zip(target, dims)] if -1 in target else target, dims, rest)


def _changed_form(out: list[int], dims: list[int], rest: str) -> list[str]:
    """``[spec]`` of the input at sizes ``out`` (``rest`` its dtype part), [] when nothing changed or it is over the
    input size cap."""
    elements = 1
    for v in out:
        elements *= v
    if out == dims or elements > MAX_ELEMENTS:
        return []
    return ["x".join(map(str, out)) + ":" + rest]


def _built_axis_hint(problem: str, dims: list[int], rest: str) -> list[str]:
    """A point cloud (B x C x N) for a model whose first convolution is 2-D over a tensor it builds (DGCNN's edge
    convolution: ``get_graph_feature`` gathers each point's k neighbours, B x 2C x N x k, from B x C x N points): the
    4-D input its first layer asked for was folded into the points' channels ("weight of size [64, 6, 1, 1],
    expected input[2, 384, 32, 20] to have 6 channels, but got 384 channels"), the convolution met an axis the input
    does not have (20, the neighbours). Tried: B x wanted/2 x N (the pair of a point and its neighbour's offset),
    then B x wanted x N, N the points the convolution met. [] for another error, input or a met axis the input has."""
    m, seen = _CONV_CHANNELS.search(problem), _CONV_INPUT.search(problem)
    if m is None or seen is None or rest.startswith("int") or len(dims) != 4:
        return []
    met = [int(v) for v in seen.group(1).split(",")]
    wanted = int(m.group(1))
    if len(met) != 4 or met[-1] in dims[1:] or met[2] < met[-1]:
        return []
    channels = [wanted // 2, wanted] if wanted % 2 == 0 and wanted >= 2 else [wanted]
    return [f"{dims[0]}x{c}x{met[2]}:{rest}" for c in channels]


# an index past a size the error names (scatter, gather, indexing): "index 11 is out of bounds for dimension 1 with
# size 10"
_INDEX_BOUND = re.compile(r"index -?\d+ is out of bounds for dimension -?\d+ with size (\d+)")


def _id_range_hint(problem: str, dims: list[int], rest: str) -> list[str]:
    """Ids drawn from a quarter of their range, when an embedding found one out of its table ("index out of range in
    self"): the model shifted them first, by per-field offsets into one shared table (torchfm's ``x + offsets``, ids
    of the last field drawn up to the table's size land past its end). Ids drawn below the size an index bound names
    ("index 11 is out of bounds for dimension 1 with size 10": class ids scattered into a mask of n_classes columns,
    CapsNet's reconstruction target drawn up to its other argument's width). A float input an embedding refused
    (a row of counts read by a Linear and, cast with ``.long()``, by the tables: a factorization machine's one input,
    drawn from a normal law, had negative values) drawn from [0, 1): every cast of it is row 0, a valid id. []
    for another error or another input."""
    bound = _INDEX_BOUND.search(problem)
    if re.fullmatch(r"float\d+", rest) and "index out of range in self" in problem:
        return ["x".join(map(str, dims)) + f":{rest}:0:1"]
    m = re.fullmatch(r"(int\d+):(-?\d+):(\d+)", rest)
    if m is not None and bound is not None and int(m.group(2)) == 0 < int(bound.group(1)) < int(m.group(3)):
        return ["x".join(map(str, dims)) + f":{m.group(1)}:0:{bound.group(1)}"]
    if m is None or "index out of range in self" not in problem:
        return []
    low, high = int(m.group(2)), int(m.group(3))
    smaller = low + (high - low) // 4
    if smaller - low < 2:
        return []
    return ["x".join(map(str, dims)) + f":{m.group(1)}:{low}:{smaller}"]


# a layer of float weights given integer ids: torch's matmul and convolution messages
_IDS_FOR_FLOATS = re.compile(r"must have the same dtype, but got (Long|Int) and (Float|Double)|"
                             r"Input type \(torch\.LongTensor\) and weight type \(torch\.FloatTensor\)|"
                             # torch.mm's own words (GRU4Rec's GRUEmbedding: ``torch.mm(H, self.Wrz0)``)
                             r"expected m1 and m2 to have the same dtype, but got: long int != float")


def _as_floats(spec: str) -> str:
    """An integer tensor form as float32 of the same shape (``2x16:int64:0:100`` -> ``2x16:float32``), each integer
    form of a list of them (``[2x16:int64:0:100, 2x16:int64:0:100]``); any other form as it is."""
    if spec.startswith("[") and spec.endswith("]"):
        return "[" + ", ".join(_as_floats(part) for part in spec[1:-1].split(", ")) + "]"
    return spec.split(":")[0] + ":float32" if re.fullmatch(r"\d+(x\d+)*:int\d+(:.*)?", spec) else spec


def _fewer_ids(problem: str, spec: str) -> str:
    """``spec`` with its ids from a quarter of their range or below an index bound (``_id_range_hint``), when it is
    an integer tensor form and the error is an embedding's "index out of range in self" or an index bound's; as it is
    otherwise (a float form too: beside ids, a float argument is the numbers a Linear reads)."""
    shape, _, rest = spec.partition(":")
    if not re.fullmatch(r"\d+(x\d+)*", shape) or not rest.startswith(("int", "uint")):
        return spec
    return (_id_range_hint(problem, [int(v) for v in shape.split("x")], rest) or [spec])[0]


def _fixed_length_hint(problem: str, dims: list[int], rest: str) -> list[str]:
    """The input with an axis at the length the model was built for, when the forward's error names a size fixed by
    the constructor: a LayerNorm over the sequence too ("Given normalized_shape=[256, 24], expected input with shape
    [*, 256, 24], but got input of size[2, 256, 16]": L-TAE's ``LayerNorm([d, len_max_seq])``), or a table added to
    the input ("The size of tensor a (16) must match the size of tensor b (24) at non-singleton dimension 1": a
    learned position table of ``max_len`` rows). The first non-batch axis of the input at the size that was got is
    set to the size that was wanted (an axis the model transposes keeps its size, so it is found by size). An integer
    input (ids) only for the elementwise message: one id column per field against the model's per-field offsets
    (torchfm's ``x + x.new_tensor(self.offsets)``, "tensor a (16) ... tensor b (2) at non-singleton dimension 1"),
    or ids against a position table. [] when no axis has that size."""
    ids = rest.startswith("int")
    if len(dims) < 2:
        return []
    pairs = []
    m = None if ids else re.search(r"normalized_shape=\[([\d, ]+)\], expected input with shape \[\*, [\d, ]+\], "
                                   r"but got input of size\s*\[([\d, ]+)\]", problem)
    if m:
        wanted = [int(v) for v in m.group(1).split(",")]
        got = [int(v) for v in m.group(2).split(",")][-len(wanted):]
        pairs = [(g, w) for w, g in zip(wanted, got) if w != g]
    m = re.search(r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\)", problem)
    if m:
        a, b = int(m.group(1)), int(m.group(2))
        pairs = [(a, b), (b, a)]  # either side may be the input's
    broadcast = None if ids else re.search(
        r"broadcast a dimension of length (\d+) at (-\d+)!.*broadcastable to \[([\d, ]+)\]", problem, re.S)
    if broadcast:  # an in-place update of the model's own table by the input's ("gaussian /= ...")
        target = [int(v) for v in broadcast.group(3).split(",")]
        at = int(broadcast.group(2))
        if -len(target) <= at:
            pairs = [(int(broadcast.group(1)), target[at])]
    out = []
    # a rank-2 input may be a model's whole unbatched sequence (spencerbraun/anomaly_transformer_pytorch's
    # AnomalyAttention(N, d_model) takes x of N x d_model: its (N, N) prior against the 2 rows drawn, "The size of
    # tensor a (16) must match the size of tensor b (2) at non-singleton dimension 0"): its leading axis too, last
    axes = [*range(1, len(dims)), *([0] if len(dims) == 2 else [])]
    for got, wanted in pairs:
        if got <= 1 or wanted <= 1:
            continue
        for axis in (i for i in axes if dims[i] == got):
            new = list(dims)
            new[axis] = wanted
            out += [spec for spec in _changed_form(new, dims, rest) if spec not in out]
            if axis != 0:
                break  # the first non-batch axis of that size
        if out and m is not None and len(dims) != 2:
            break  # the input's side found: the other side is the table's
    return out


def _length_hint(problem: str, dims: list[int], rest: str) -> list[str]:
    """The input with its trailing axes long enough for the window the forward's error names (a float input only):
    a padding wider than the signal ("padding (2048, 2048) at dimension 2 of input [2, 1, 16]": nnAudio's CQT pads
    its waveform by half its longest kernel) or a kernel longer than the input ("Calculated padded input size per
    channel: (38). Kernel size: (251)"): each such axis the smallest power of two at least twice the window, within
    the input size cap. Integer tokens embedded and convolved as an image, (sequence x width) by a (k x width) kernel
    (a text CNN: "Calculated padded input size per channel: (2 x 16). Kernel size: (16 x 16)", the 2 tokens of a
    sequence-first ``text.permute(1, 0)``): the input's axis of that sequence length, long enough. [] otherwise."""
    if rest.startswith("int"):
        m = re.search(r"input size per channel: \((\d+) x (\d+)\)\. Kernel size: \((\d+) x (\d+)\)", problem)
        if m is None or int(m.group(2)) != int(m.group(4)) or int(m.group(3)) <= int(m.group(1)):
            return []
        axis = next((i for i, d in enumerate(dims) if d == int(m.group(1))), None)
        if axis is None:
            return []
        out = list(dims)
        out[axis] = _covering_length(int(m.group(3)))
        return _changed_form(out, dims, rest)
    m = re.search(r"[Pp]adding size should be less than the corresponding input dimension, but got: padding "
                  r"\((\d+), (\d+)\)", problem)
    if m:
        windows = [max(int(m.group(1)), int(m.group(2))) + 1]
        # the padded tensor is the model's own, shorter than the input by the strides before it (EnCodec's encoder
        # downsamples 320 times: "padding (1, 1) at dimension 2 of input [2, 256, 1]" for a 2 x 16 x 256 input): the
        # window scaled by that ratio
        seen = re.search(r"at dimension (\d+) of input \[([\d, ]+)\]", problem)
        if seen is not None:
            their = [int(v) for v in seen.group(2).split(",")]
            axis = int(seen.group(1))
            if len(their) == len(dims) and axis == len(dims) - 1 and 0 < their[axis] < dims[axis]:
                windows = [windows[0] * -(-dims[axis] // their[axis])]
    else:
        m = re.search(r"input size per channel: \(([\d x]+)\)\. Kernel size: \(([\d x]+)\)", problem)
        windows = [int(v) for v in m.group(2).split(" x ")] if m else []
    if not windows or len(windows) >= len(dims):
        return []
    out = list(dims)
    for k, window in enumerate(windows[::-1]):
        axis = len(dims) - 1 - k
        out[axis] = max(out[axis], _covering_length(window))
    return _changed_form(out, dims, rest)


_RECEPTIVE_FIELD = re.compile(r"receptive[ _]fields?\b[^\d\n]{0,40}?(\d+)", re.I)


def _receptive_field_hint(problem: str, dims: list[int], rest: str) -> list[str]:
    """The input with one axis long enough for the receptive field the forward's own check names (golbin/WaveNet:
    "Input size has to be larger than receptive_fields\nInput size: 32, Receptive fields size: 62", a dilated causal
    stack checks its input's time axis before it convolves): each non-batch axis in turn at the smallest power of two
    at least twice the field, the longer axes first (a time axis is the long one of a small input; which one the
    model reads as time, after its own transposes, only running it tells). A float input only. [] otherwise."""
    m = _RECEPTIVE_FIELD.search(problem)
    if m is None or rest.startswith("int") or len(dims) < 2:
        return []
    length = _covering_length(int(m.group(1)))
    out = []
    for axis in sorted(range(1, len(dims)), key=lambda i: -dims[i]):
        new = list(dims)
        new[axis] = max(dims[axis], length)
        out += [spec for spec in _changed_form(new, dims, rest) if spec not in out]
    return out


def _covering_length(window: int) -> int:
    """The smallest power of two at least twice ``window``: an input axis long enough for it."""
    length = 1
    while length < 2 * window:
        length *= 2
    return length


def _int_attrs(module) -> list[int]:
    """Sizes a custom layer keeps (in_features, dim, ...) or its first matrix parameter's last dimensions."""
    out = [v for k, v in vars(module).items() if isinstance(v, int) and not isinstance(v, bool) and 1 < v <= 4096
           and any(w in k for w in ("in", "dim", "feat", "size", "channel", "hidden"))]
    # (its own _parameters: a model may override parameters() without torch's recurse argument: torchdiffeq's EventFn)
    for p in (p for p in module._parameters.values() if p is not None):
        if p.dim() == 2:
            out += [int(p.shape[0]), int(p.shape[1])]
            break
        if p.dim() == 1 and 1 < p.shape[0] <= 4096:  # a hand-written norm's gain (pytorchic-bert's LayerNorm)
            out.append(int(p.shape[0]))
    return out


def _channels_as(spec: str, was: str, now: str) -> str:
    """``spec`` with the channel count ``now`` has where it had ``was``'s (same rank, same dtype, other sizes kept).
    Rank 2 too: rows of features (a graph's edge features beside its nodes', UAlign's SparseEdgeUpdateLayer: the
    nodes at the width the join's error names, the edges' width with them)."""
    a, b, c = (x.partition(":") for x in (spec, was, now))
    da, db, dc = (x[0].split("x") for x in (a, b, c))
    if len(da) != len(db) or len(db) != len(dc) or len(da) < 2 or a[2] != b[2] or da[1] != db[1]:
        return spec
    return "x".join([da[0], dc[1], *da[2:]]) + ":" + a[2]


def _insert_next(tries: list, after: list, retries, room: int) -> int:
    """The ``retries`` not in ``tries`` yet inserted right after ``after``, in order, at most ``room`` of them (a
    hint's budget): how many were."""
    at, n = tries.index(after) + 1, 0
    for retry in retries:
        if n >= room:
            break
        if retry not in tries:
            tries.insert(at + n, retry)
            n += 1
    return n


def _at_size(spec: str, was: str, now: str) -> str | None:
    """``spec`` (B x C x spatial axes) with its spatial axes of size ``was`` at ``now``, within MAX_ELEMENTS; None
    when it has no such axis (or another form)."""
    shape, sep, rest = spec.partition(":")
    dims = shape.split("x")
    if not re.fullmatch(r"\d+(x\d+){2,}", shape) or was not in dims[2:]:
        return None
    moved = "x".join(dims[:2] + [now if d == was else d for d in dims[2:]]) + sep + rest
    return moved if _elements(moved) <= MAX_ELEMENTS else None


def _split_join(problem: str, specs: list[str], names: list[str], widths: dict[str, int]) -> list[str] | None:
    """The inputs at widths that add up to what the layer after their join takes, when the forward joins them on
    their last axis first (a world model's ``cat((z, action), dim=-1)`` before ``LSTM(input_size=z_dim +
    action_dim)``: given alike, 2 x 8 x 35 twice, the LSTM got 70 of the 35 it takes). An argument's width is what its
    name says, when the model or its constructor has an int of a name it suggests (``action`` -> ``action_dim`` = 3,
    ``z`` -> ``nz`` = 32: ``widths``); the first argument whose width is unknown takes the rest, the others 1. None
    when the error is of another kind or the inputs are not float arrays alike but for their last axis, or the
    widths given add up to something else."""
    m = _RNN_WIDTHS.search(problem) or _NORM_WIDTHS.search(problem)
    if m is not None:
        wanted, got = int(m.group(1)), int(m.group(2))
    else:
        m = _MATMUL_WIDTHS.search(problem)
        if m is None:
            return None
        wanted, got = int(m.group(2)), int(m.group(1))
    parsed = [spec.partition(":") for spec in specs]
    if any(not re.fullmatch(r"\d+(x\d+)*", shape) or not rest.startswith("float") for shape, _, rest in parsed):
        return None
    dims = [[int(v) for v in shape.split("x")] for shape, _, _ in parsed]
    if len({tuple(d[:-1]) for d in dims}) != 1 or sum(d[-1] for d in dims) != got or wanted == got:
        return None
    known: list[int | None] = []
    for name in names[:len(specs)]:
        # (a plural argument by its singular too: ``observations`` -> ``observation_dim``)
        w = next((widths[k] for n in dict.fromkeys((name, name[:-1] if name.endswith("s") else name)) for k in (
            f"{n}_dim", f"{n}_size", f"{n}_len", f"{n}_length", f"{n}_dims", f"{n}_features", f"{n}_channels",
            f"dim_{n}", f"n_{n}", f"n{n}") if k in widths), None)
        known.append(w if w is not None and 0 < w < wanted else None)
    known += [None] * (len(specs) - len(known))
    unknown = [i for i, w in enumerate(known) if w is None]
    left = wanted - sum(w for w in known if w is not None)
    if unknown:
        for i in unknown[1:]:
            known[i] = 1
        known[unknown[0]] = left - (len(unknown) - 1)
    if any(w is None or w < 1 for w in known) or sum(known) != wanted:
        return None
    return ["x".join(map(str, [*d[:-1], w])) + ":" + rest for d, w, (_, _, rest) in zip(dims, known, parsed)]


def _int_facts(model, ctor: str, params: list[dict]) -> dict[str, int]:
    """The ints a model's sizes may be read from by name: its own attributes, then its constructor call's keywords,
    then the constructor's int defaults."""
    out: dict[str, int] = {}
    for p in params:
        if isinstance(p.get("default"), str) and p["default"].isdigit():
            out[p["name"]] = int(p["default"])
    out.update((k, int(v)) for k, v in re.findall(r"\b(\w+)=(\d+)\b", ctor))
    out.update((k, v) for k, v in vars(model).items() if type(v) is int)
    return out


def _join_sizes(problem: str) -> tuple[str, str] | None:
    """(expected, got) sizes of a join whose tensors disagree off the joined axis ("Sizes of tensors must match except
    in dimension 1. Expected size 32 but got size 64 for tensor number 1 in the list."), None otherwise."""
    m = re.search(r"Sizes of tensors must match except in dimension \d+\. Expected size (\d+) but got size (\d+)",
                  problem or "")
    return (m.group(1), m.group(2)) if m else None


def _token_form(spec: str, first: str, index: int) -> str:
    """The shape of ``spec`` for ids: as it is, but a later argument of the first one's rank-2 shape is 2 x 16."""
    shape = spec.partition(":")[0]
    if index and shape == first.partition(":")[0] and shape.count("x") == 1:
        return shape.split("x")[0] + "x16"
    return shape


def _elementwise_sizes(problem: str) -> tuple[str, str, bool] | None:
    """(a, b, on the channel axis?) of two sizes an elementwise operation found apart ("The size of tensor a (16) must
    match the size of tensor b (32) at non-singleton dimension 3": ("16", "32", False)); None otherwise (or on the
    batch axis)."""
    m = re.search(r"The size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\) at non-singleton "
                  r"dimension (\d+)", problem or "")
    if m is None or int(m.group(3)) < 1:
        return None
    return m.group(1), m.group(2), int(m.group(3)) == 1


def _other_sizes(spec: str, a: str, b: str, channels: bool) -> list[str]:
    """``spec`` (B x C x two or more spatial axes) in the forms that may meet the other operand: its channels of one
    of the two sizes at the other (a projection's width); its spatial axes times, then divided by, the ratio of the
    two sizes (a stride or an upsampling on the way: which of the two the argument became is not known). Each within
    MAX_ELEMENTS; [] for another form."""
    shape, sep, rest = spec.partition(":")
    if not re.fullmatch(r"\d+(x\d+){3,}", shape):
        return []
    dims = [int(v) for v in shape.split("x")]
    low, high = sorted((int(a), int(b)))
    if channels:
        if dims[1] not in (low, high):
            return []
        forms = [[*dims[:1], high if dims[1] == low else low, *dims[2:]]]
    elif low and high % low == 0 and high > low:
        ratio = high // low
        forms = [[*dims[:2], *(d * ratio for d in dims[2:])]]
        if all(d % ratio == 0 and d // ratio >= 2 for d in dims[2:]):
            forms.append([*dims[:2], *(d // ratio for d in dims[2:])])
    else:
        return []
    out = ["x".join(map(str, form)) + sep + rest for form in forms]
    return [form for form in out if _elements(form) <= MAX_ELEMENTS]


def _spatially_shrunk(spec: str) -> str:
    """``spec`` (B x C x spatial axes) with its spatial axes halved until it is within MAX_ELEMENTS, none below 8;
    as it is for another form."""
    shape, sep, rest = spec.partition(":")
    if not re.fullmatch(r"\d+(x\d+){2,}", shape):
        return spec
    dims = [int(v) for v in shape.split("x")]
    while _elements("x".join(map(str, dims))) > MAX_ELEMENTS and all(d >= 16 for d in dims[2:]):
        dims = dims[:2] + [d // 2 for d in dims[2:]]
    return "x".join(map(str, dims)) + sep + rest


def _elements(spec: str) -> int:
    shape = spec.split(":")[0]
    if not re.fullmatch(r"\d+(x\d+)*", shape):  # a value:/fn: input, a file
        return 0
    n = 1
    for v in shape.split("x"):
        n *= int(v)
    return n


def _takes_no_input(model) -> bool:
    """Whether the module's forward takes no argument at all (no parameter, no ``*args``)."""
    import inspect

    try:
        return not inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return False


def _run_forward(model, specs: list[str], seconds: float):
    import numpy as np

    from mindport.validators.parity.loading import make_inputs, parse_input_spec

    arrays = make_inputs([parse_input_spec(s) for s in specs], seed=1)
    outs = [_forward_once(model, arrays, seconds) for _ in range(2)]
    if not outs[0] or all(a is None for _, a in outs[0]):
        return "the forward returned no tensor"
    if _differing(outs) is not None:
        # a forward that writes the model's own state at every call (a spectral norm's power iteration updating
        # its ``u`` and ``v``, a counter, running statistics updated whatever the mode: heykeetae/Self-Attention-
        # GAN's SpectralNorm) is deterministic given that state, as each side of the proof has it (side_torch's
        # snapshot/restore): the two runs again, from one state. (Not first: a data-aware initialisation on the
        # first forward, NODE's thresholds, keeps its done-flag in Python, which no restore takes back.)
        from mindport.validators.parity.side_torch import state_copy

        state = state_copy(model)
        outs = [_forward_once(model, arrays, seconds)]
        _state_restore(model, state)
        outs.append(_forward_once(model, arrays, seconds))
    k = _differing(outs)
    if k is not None:
        return f"the eval forward is not deterministic (output {k})"
    for k, a in outs[0]:
        if a is None:
            continue
        if a.dtype.kind in "fc" and not np.isfinite(a).all():
            return f"the eval forward gives non-finite values (output {k})"
        if a.size == 0:  # a degenerate build (a layer of width 0): nothing to prove, MindSpore refuses the layer
            return f"the eval forward gives an empty tensor (output {k} of shape {tuple(a.shape)})"
    return None  # integer and boolean outputs too (a padding or causal mask module): the proof compares them exactly


def torch_inputs(arrays):
    """The forward's torch arguments, fresh copies of ``arrays`` (the proof's one rule: side_torch.torch_inputs)."""
    from mindport.validators.parity.side_torch import torch_inputs as convert

    return convert(arrays)


def _forward_once(model, arrays, seconds: float) -> list:
    """One eval forward of ``model`` on ``arrays`` within ``seconds``: its outputs flattened (``flat_numpy``)."""
    import torch

    from mindport.proofs.replay import drawing
    from mindport.validators.parity.sides import flat_numpy

    _alarm(seconds)
    inputs = torch_inputs(arrays)
    entered = _LastLayer(inputs)
    try:
        # a forward that draws (torch.randn_like, dropout with training=True, a sampler) draws from the fixed
        # stream its proof replays on both sides (mindport.proofs.replay): deterministic here as in the proof;
        # a draw the replay does not cover (alpha_dropout, Python's random) still differs
        with torch.no_grad(), drawing("torch"), entered:
            out = model(*inputs)
    except Exception as exc:
        exc.mp_inputs = entered.inputs()  # which of the forward's arguments the refusing layer was given
        raise
    finally:
        _no_alarm()
    return flat_numpy(out)[0]


def _differing(outs: list) -> str | None:
    """The first output key whose two runs differ (shape or values, NaN equal to NaN), or None."""
    import numpy as np

    for (k, a), (_, b) in zip(outs[0], outs[1]):
        if a is not None and (a.shape != b.shape or not np.array_equal(a, b, equal_nan=True)):
            return k
    return None


def _state_restore(model, state: dict) -> None:
    """The parameters and buffers put back as ``state`` holds them, in place (a tensor a forward rebound through
    ``.data`` is the one written); one that changed its shape or vanished is left as the forward made it."""
    import torch

    with torch.no_grad():
        for k, v in model.state_dict().items():
            old = state.get(k)
            if old is not None and old.shape == v.shape and old.dtype == v.dtype and not torch.equal(old, v):
                v.copy_(old)


class _LastLayer:
    """While active, the tensors the last layer entered was given (a forward pre-hook on every module): the layer
    that raised, when a forward fails in one. ``inputs()``: the indices of the forward's arguments sharing storage
    with them (the argument itself, or a view or permutation of it: Autoformer's ``x_mark_enc`` reaching the
    ``Linear(4, d_model)`` of its time-feature embedding), so that a shape error is laid at the argument it is
    about, not always at the first."""

    def __init__(self, arguments):
        self.arguments = [self._storages(a) for a in arguments]
        self.last: set = set()
        # the modules entered and not yet returned, outermost (the model itself) first: a failure in a module's own
        # code after its last layer returned is laid at that module's arguments, not at the finished layer's
        # (GRU4Rec's GRUEmbedding: ``self.Wx0(X)`` embeds the ids, then ``torch.mm(H, W)`` refuses H given as ids;
        # the ids were made floats, the embedding refused them). The model itself: no argument named.
        self._open: list = []
        self._handles: list = []

    @staticmethod
    def _storages(value) -> set:
        import torch

        if isinstance(value, torch.Tensor):
            try:
                return {value.untyped_storage().data_ptr()}
            except (RuntimeError, NotImplementedError):
                return set()
        if isinstance(value, (list, tuple)):
            return set().union(*(_LastLayer._storages(v) for v in value)) if value else set()
        if isinstance(value, dict):
            return set().union(*(_LastLayer._storages(v) for v in value.values())) if value else set()
        return set()

    def __enter__(self):
        from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

        def pre(module, args):
            self.last = self._storages(args)
            self._open.append(self.last)

        def post(module, args, output):
            if self._open:
                self._open.pop()
            self.last = self._open[-1] if len(self._open) > 1 else set()

        self._handles = [register_module_forward_pre_hook(pre), register_module_forward_hook(post)]
        return self

    def __exit__(self, *exc):
        for handle in self._handles:
            handle.remove()
        return False

    def inputs(self) -> set:
        return {i for i, s in enumerate(self.arguments) if s and s & self.last}


class _Reached(Exception):
    pass


# a view of the flattened features at a fixed width: (the width, the elements it got)
_FLAT_VIEW = re.compile(r"shape '\[-1, (\d+)\]' is invalid for input of size (\d+)")


def _flattened_fits(model, specs: list[str], problem: str, seconds: float) -> list[list[str]]:
    """The inputs with the first at the spatial size the model's classifier was built for, when the forward's error is a
    Linear layer refusing the flattened features ("mat1 and mat2 shapes cannot be multiplied (2x1600 and 576x128)":
    MTCNN's RNet flattens 64 x 3 x 3 after its convolutions, for a 24 x 24 input; LeNet's 16 x 5 x 5 for 32 x 32).
    The flattened width grows with the side, so the side is found by bisection over 4..512 (every spatial axis
    alike): each step runs the forward up to the layer that takes that many features (a pre-hook stops it there);
    a step whose forward fails before it (an input too small for a kernel) counts as too small. [] when no side
    gives the width, or for an input that is no float image, volume or sequence (B x C x L).
    When no side fits with the other inputs as they are and some of them were guessed alike the first (the same
    form), those take the first's side with it: a pair joined before the convolutions (a pix2pix discriminator's
    ``model(cat((img_a, img_b), 1))`` then ``Linear(512 * 16 * 16, 1)``: with the second image left at 32 x 32 the
    join fails at every side, and no side was found)."""
    import torch

    from mindport.validators.parity.loading import make_inputs, parse_input_spec

    m = re.search(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)", problem)
    viewed = _FLAT_VIEW.search(problem)
    shape, _, rest = specs[0].partition(":") if specs else ("", "", "")
    if (m is None and viewed is None) or not re.fullmatch(r"\d+(x\d+){2,4}", shape) or not rest.startswith("float"):
        return []
    dims = [int(v) for v in shape.split("x")]
    if m is None:
        # the flattened features viewed at the width the classifier was built for (``x.view(-1, 320)`` of the
        # PyTorch MNIST example's Net, 20 x 4 x 4 for a 28 x 28 input: "shape '[-1, 320]' is invalid for input of
        # size 1000" at 32 x 32; pritishyuvraj/Voice-Conversion-GAN's tutorial notebook): the width is read from the
        # view's error (its elements per sample), a side whose forward gets past the view with an output of the
        # input's batch is the one
        wanted, target = int(viewed.group(1)), viewed.group(1)
        if int(viewed.group(2)) == dims[0] * wanted:
            return []
        layers = []
    else:
        wanted, target = int(m.group(3)), None
        layers = [mod for mod in model.modules() if isinstance(mod, torch.nn.Linear) and mod.in_features == wanted]
        if not layers or int(m.group(2)) == wanted:
            return []

    def reached(mod, args):
        raise _Reached(args[0].shape[-1] if args and hasattr(args[0], "shape") else -1)

    def batch(out) -> int:
        first = next(iter(out.values()), None) if isinstance(out, dict) else \
            out[0] if isinstance(out, (tuple, list)) and out else out
        return int(first.shape[0]) if hasattr(first, "shape") and len(first.shape) > 0 else 0

    def width(side: int, alike: bool):
        first = "x".join(map(str, [*dims[:2], *[side] * (len(dims) - 2)])) + ":" + rest
        first = [first, *(first if alike and sp == specs[0] else sp for sp in specs[1:])]
        try:
            arrays = make_inputs([parse_input_spec(sp) for sp in first], seed=1)
        except Exception:  # noqa: BLE001
            return None, first
        hooks = [mod.register_forward_pre_hook(reached) for mod in layers]
        _alarm(seconds)
        try:
            with torch.no_grad():
                out = model(*torch_inputs(arrays))
            if target is not None:  # past the view: its rows are the output's batch (the input's when it fits)
                rows = batch(out)
                return (wanted * rows / dims[0] if rows else None), first
            return None, first  # never reached the layer
        except _Reached as got:
            return got.args[0], first
        except Exception as error:  # noqa: BLE001 - too small for a kernel: counts as short
            again = _FLAT_VIEW.search(str(error)) if target is not None else None
            if again is not None and again.group(1) == target:
                return int(again.group(2)) / dims[0], first
            return 0, first
        finally:
            _no_alarm()
            for h in hooks:
                h.remove()

    def bisect(alike: bool):
        lo, hi, found = 4, 512, None
        if len(dims) == 5:
            hi = 96  # a volume: its elements grow with the cube
        while lo <= hi:
            mid = (lo + hi) // 2
            got, first = width(mid, alike)
            if got is None:
                return None
            if got == wanted:
                found = first
                hi = mid - 1  # the smallest side that fits (cheaper to prove)
            elif got < wanted:
                lo = mid + 1
            else:
                hi = mid - 1
        return found

    found = bisect(False)
    if found is None and specs[0] in specs[1:] and len(dims) >= 4:  # images or volumes joined before the convolutions
        found = bisect(True)
    if found is None or _elements(found[0]) > MAX_ELEMENTS:
        return []
    return [found]


_IMAGE_SIZE = r"(img|image|input|in|crop)_?(size|res|resolution|shape)|resolution|img_?dim"
_IMAGE_SIDES = (r"(img|image|input)_?(height|h)", r"(img|image|input)_?(width|w)")  # height first, as the input's
_IMAGE_CHANNELS = r"in_?(c|ch|chs|chans|channels|planes|dim)|(input|image|img)_?(channels|ch|chans|dim)|n_?channels|" \
    r"num_channels|channels"


def constructor_images(params: list[dict], ctor: str) -> list[list[str]]:
    """An image input of the size the constructor was given (a parameter named like ``img_size``, ``image_size``,
    ``resolution``: an int or a pair, as the call ``ctor`` sets it, else its default; or ``image_height`` and
    ``image_width``) with the channels it was given
    (``in_c``, ``in_chans``, ``in_channels``; else 3): ``[["2x3x32x32:float32"]]``; none without such a parameter."""
    import ast

    values: dict = {}
    for p in params:
        if p.get("default") not in (None, ""):
            try:
                values[p["name"]] = ast.literal_eval(p["default"])
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                pass
    try:
        call = ast.parse(f"f({ctor})", mode="eval").body
    except SyntaxError:
        return []
    names = [p["name"] for p in params if p.get("kind") in ("positional", "keyword")]
    pairs = list(zip(names, call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg]
    for name, node in pairs:
        try:
            values[name] = ast.literal_eval(node)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            values.pop(name, None)
    size = next((v for k, v in values.items() if re.fullmatch(_IMAGE_SIZE, k.lower())), None)
    sides = [next((v for k, v in values.items() if re.fullmatch(side, k.lower())), None) for side in _IMAGE_SIDES]
    if size is None and all(type(v) is int for v in sides):
        size = tuple(sides)  # kazukiii/caps-net-pytorch's CapsuleNetwork(image_width=28, image_height=28, ...)
    if type(size) is int:
        size = (size, size)
    if not (isinstance(size, (tuple, list)) and len(size) == 2 and all(type(v) is int and 0 < v <= 512
                                                                         for v in size)):
        return []
    channels = next((v for k, v in values.items() if re.fullmatch(_IMAGE_CHANNELS, k.lower())), 3)
    if type(channels) is not int or not 0 < channels <= 64:
        return []
    return [[f"2x{channels}x{size[0]}x{size[1]}:float32"]]


_SHAPE_ATTRIBUTE = re.compile(r"(img|image|input|in|x|data)_?(shape|dims?|size)")


def attribute_images(model, tries: list[list[str]]) -> list[list[str]]:
    """The first argument in the shape the built model keeps of it (``self.img_shape = (opt.channels, opt.img_size,
    opt.img_size)``, the PyTorch-GAN idiom: a conditional critic's ``img.view(img.size(0), -1)`` joined to its label
    embedding, GodWriter/GAN-Pytorch's cGAN, whose first layer met is that Embedding): ``2 x shape`` float32, with the
    other arguments of each form tried so far (the labels beside it). [] without such an attribute."""
    shape = next((v for k, v in vars(model).items() if _SHAPE_ATTRIBUTE.fullmatch(k.lower())
                  and isinstance(v, (tuple, list)) and 1 <= len(v) <= 4
                  and all(type(d) is int and 0 < d <= 512 for d in v)), None)
    if shape is None:
        return []
    firsts = ["x".join(map(str, [2, *shape])) + ":float32"]
    if shape[0] == 1 and len(shape) >= 2:  # ``input_size = (1, latent_dim)  # 1 for batch``: the batch replaced too
        firsts.append("x".join(map(str, [2, *shape[1:]])) + ":float32")
    out = [[first, *specs[1:]] for first in firsts if _elements(first) <= MAX_ELEMENTS
           for specs in (tries or [[]])]
    return [list(t) for t in dict.fromkeys(map(tuple, out))]


class _ProbeRecorder:
    """The inputs a constructor hands its own layers while it builds them: a model that sizes its classifier by
    running a sample through its convolutions (``sample = torch.zeros(1, 1, n_input, fixed_length)``, then
    ``self.fc1 = nn.Linear(self.convs(sample).numel(), 128)``) takes inputs of that sample's form, at sides no
    square image has (perceptronq/keywordspot's SimpleCNN: 13 MFCC coefficients x 215 frames; at 32 x 32, "mat1 and
    mat2 shapes cannot be multiplied (2x1152 and 1664x128)")."""

    def __enter__(self):
        import torch

        self.calls: list[tuple[object, tuple, object]] = []

        def hook(module, args):
            if len(self.calls) < 64 and args and isinstance(args[0], torch.Tensor):
                self.calls.append((module, tuple(args[0].shape), args[0].dtype))

        self._handle = torch.nn.modules.module.register_module_forward_pre_hook(hook)
        return self

    def __exit__(self, *exc):
        self._handle.remove()
        return False

    def spec(self, model, fwd: list[dict]) -> list[list[str]]:
        """The first sample the constructor ran through one of the model's layers, at a batch of 2, as the input
        of a forward taking one tensor; none otherwise."""
        required = [p for p in fwd if p["default"] is None and p["kind"] == "positional"]
        if len(required) != 1:
            return []
        own = {id(m) for m in model.modules()}
        for module, shape, dtype in self.calls:
            if id(module) in own and module is not model and len(shape) >= 2 and dtype.is_floating_point:
                dims = [2 if shape[0] == 1 else shape[0], *shape[1:]]
                return [["x".join(map(str, dims)) + ":" + str(dtype).replace("torch.", "")]]
        return []


def _meta_params(ref: str, ctor: str, root: str, seconds: float) -> int | None:
    """The parameter count of the model built on the meta device (no memory, no init), or None when it cannot be."""
    import torch

    from mindport.validators.parity.loading import build_model

    try:
        with _Limited(seconds), torch.device("meta"):
            model = build_model(ref, ctor, root=root, isolated=True)
        return sum(p.numel() for p in model.parameters()) if isinstance(model, torch.nn.Module) else None
    except BaseException as exc:  # noqa: BLE001 - built for real next
        if isinstance(exc, KeyboardInterrupt):
            raise
        return None


def build_one(cand: dict, user_ctor: str | None, root: str, seconds: float, max_params: int = MAX_PARAMS,
              observed: dict | None = None, watch=(), work: str | None = None) -> dict:
    """``observed``: the forward inputs containers built before handed this class (forward_inputs.py), tried first
    with the construction they were recorded at; when this candidate builds and runs, what its forward hands the
    classes in ``watch`` is recorded into ``observed`` (arrays under ``work``)."""
    import torch

    from mindport.validators.parity.loading import build_model
    from mindport.validators.parity.side_torch import set_mode

    from mindport.discovery.scan import model_ref

    ref = model_ref(root, cand["rel"], cand["name"], cand.get("dotted", ""))
    key = f"{cand['rel']}:{cand['name']}"
    result = {"class": key, "status": "not-built", "attempts": []}
    errors = []
    seen_inputs = (observed or {}).get(key, [])
    attempts = ctor_attempts(dict(cand, repo_configs=repository_configs(root), repo_files=repository_files(root)),
                             user_ctor)
    if not user_ctor:  # the construction the container's call was recorded at, first (the repository's own call)
        for ob in reversed(seen_inputs):
            if ob["ctor"] is not None:
                origin = next((o for o, c in attempts if c == ob["ctor"]), "repository call site")
                attempts = [(origin, ob["ctor"])] + [a for a in attempts if a[1] != ob["ctor"]]
    recording = observed is not None and bool(watch) and work is not None

    def smaller(origin: str, ctor: str) -> None:
        """A construction over the cap is tried next at small sizes (shrunk_call), once."""
        small = shrunk_call(ctor, cand["params"])
        if small is not None and all(small != c for _, c in attempts):
            attempts.insert(attempts.index((origin, ctor)) + 1, (f"{origin}, small sizes", small))

    def larger(origin: str, ctor: str, input_errors: list[str]) -> None:
        """A construction whose every input was too small for its strides (a critic of five stride-2 convolutions
        ending in a 4 x 4 kernel needs 64 x 64 images, its ``img_size=32`` fixes the image: quickgrid/
        paper-implementations' conditional WGAN) is tried next with its image size doubled, up to 128."""
        if not any(_TOO_SMALL.search(e) for e in input_errors):
            return
        m = _IMAGE_SIZE_ARG.search(ctor)
        if m is None or int(m.group(2)) >= 128:
            return
        bigger = ctor[:m.start(2)] + str(int(m.group(2)) * 2) + ctor[m.end(2):]
        if all(bigger != c for _, c in attempts):
            attempts.insert(attempts.index((origin, ctor)) + 1, (f"{origin}, a larger image", bigger))

    raised = []  # per input tried on a built model: did its forward raise NotImplementedError
    for origin, ctor in attempts:  # grows while it runs: smaller() inserts after the current attempt
        n_meta = _meta_params(ref, ctor, root, seconds)
        if n_meta is not None and n_meta > max_params:  # never built for real: a huge init costs minutes
            errors.append(f"{origin} ({ctor}): {n_meta:,} parameters (over {max_params:,})")
            smaller(origin, ctor)
            continue
        torch.manual_seed(0)
        t = time.perf_counter()
        calls = None
        try:
            with _Limited(seconds), _ProbeRecorder() as probes:
                if recording:  # each sub-module's construction, for the blocks whose forward inputs are recorded
                    from mindport.discovery.call_sites import CallRecorder

                    calls = CallRecorder(root, [])
                    with calls:
                        model = build_model(ref, ctor, root=root, isolated=True)
                else:
                    model = build_model(ref, ctor, root=root, isolated=True)
        except BaseException as exc:  # noqa: BLE001 - every failure is a reason
            if isinstance(exc, KeyboardInterrupt):
                raise
            errors.append(f"{origin} ({ctor}): {_short(exc)}")
            odd = odd_kernels(ctor, cand["params"]) if _ODD_WANTED.search(_short(exc)) else None
            if odd is not None and all(odd != c for _, c in attempts):
                attempts.insert(attempts.index((origin, ctor)) + 1, (f"{origin}, odd kernel sizes", odd))
            handed = _kwargs_handed_on(cand, ctor, exc)
            if handed is not None and all(handed != c for _, c in attempts):
                attempts.insert(attempts.index((origin, ctor)) + 1, (f"{origin}, the arguments its **kwargs hand on",
                                                                     handed))
            continue
        if not isinstance(model, torch.nn.Module):
            errors.append(f"{origin} ({ctor}): built a {type(model).__name__}, not a torch.nn.Module")
            continue
        n_params = sum(p.numel() for p in model.parameters())
        empty = next((name for name, p in model.named_parameters() if p.numel() == 0), None)
        if empty is not None:  # ShuffleNet's branch of oup - inp channels at oup == inp: nothing real to prove
            errors.append(f"{origin} ({ctor}): a layer of width 0 ({empty} is empty)")
            continue
        if n_params > max_params:
            errors.append(f"{origin} ({ctor}): {n_params:,} parameters (over {max_params:,})")
            smaller(origin, ctor)
            continue
        set_mode(model)  # not model.eval(): a model may define a train() of its own (side_torch.set_mode)
        if _takes_no_input(model):  # forward(self): a learned table or a constant the module gives (gitE0Z9/
            # pytorch-implementations' ChannelVector returns its parameter), called with nothing
            fwd, handed, tries = [], [], [[]]
        else:
            fwd = _handed_forward_use(model, cand["forward"] or [])
            tries = [s for s in cand["inputs"][:4]] + [s for s in first_layer_inputs(model, fwd)]
            # first after the repository's own: the input the constructor probed its own layers with
            probed = probes.spec(model, fwd)
            tries = tries[:len(cand["inputs"][:4])] + [s for s in probed if s not in tries] + \
                [s for s in tries[len(cand["inputs"][:4]):] if s not in probed]
            # after the first layer's forms: the image the constructor was told of (``ViT(in_c=3, img_size=32,
            # patch=8)`` unfolds its input into patches before its first Linear, which takes a patch's flattened
            # length)
            tries += [s for s in constructor_images(cand["params"], ctor) if s not in tries]
            # first: the image in the shape the model keeps (``self.img_shape``), with the others' forms
            tries = [s for s in attribute_images(model, tries) if s not in tries] + tries
            # first: a forward whose first argument is a number (a length it makes positions from)
            tries = [s for s in number_inputs(fwd) if s not in tries] + tries
            # first: integer tensors the annotation asks for (``t: torch.LongTensor``); after the others, a time step
            # by its name (a diffusion model's sinusoidal table read at ``self.pos_encoding[t]``)
            annotated, named = integer_inputs(fwd)
            tries = [s for s in annotated if s not in tries] + tries + [s for s in named if s not in tries]
            sequences = [s for s in sequence_inputs(model, fwd, tries) if s not in tries]
            # after the tensor forms; first for an argument the forward unpacks (``x, y = inputs``: a tensor of two
            # rows would unpack too)
            unpacked = any(p.get("use") == "sequence" and p.get("length") for p in fwd)
            tries = sequences + tries if unpacked else tries + sequences
            # first: an argument read by key takes no tensor
            tries = [s for s in mapping_inputs(fwd, tries) if s not in tries] + tries
            # first: the sizes the forward asserts (``assert x.size(1) == 2``)
            tries = [s for s in sized_inputs(model, fwd, tries) if s not in tries] + tries
            # first of all: what a container's forward handed this class, recorded at this construction
            handed = [ob["inputs"] for ob in seen_inputs if ob["ctor"] in (None, ctor)]
            tries = handed + [s for s in tries if s not in handed]
        seen = []
        input_errors = []
        hinted = optional = fitted = others = grown = 0
        int_facts = _int_facts(model, ctor, cand["params"])  # the sizes its names may say (_split_join), once
        for specs in tries:
            if specs in seen:
                continue
            if any(_elements(s) > MAX_ELEMENTS for s in specs):
                # over the input cap: the same form at a smaller spatial size, next (0xMukesh/paper-implementations'
                # InceptionResNetC takes 1792 channels: every image form of its first convolution was over the cap)
                shrunk = [_spatially_shrunk(s) for s in specs]
                if shrunk not in tries and all(_elements(s) <= MAX_ELEMENTS for s in shrunk):
                    tries.insert(tries.index(specs) + 1, shrunk)
                continue
            seen.append(specs)
            failure = None
            try:
                problem = _run_forward(model, specs, seconds)
            except BaseException as exc:  # noqa: BLE001
                if isinstance(exc, KeyboardInterrupt):
                    raise
                problem, failure = _short(exc), exc
            raised.append(isinstance(failure, NotImplementedError))
            if failure is not None and _NONE_USE.search(problem) and optional < 8:
                # an optional argument left at None that the forward uses as a tensor: the same inputs with a
                # tensor for it (``_optional_tensor_inputs``), tried next
                optional += _insert_next(tries, specs, _optional_tensor_inputs(model, fwd, specs, _none_names(failure)),
                                         8 - optional)
            joined = _joined_width_hint(problem, specs[0]) if problem is not None and specs \
                and specs[0].startswith("[") and hinted < 3 else None
            if joined is not None:  # a list input's joined feature vector at the width the model's Linear takes
                retry = [joined, *specs[1:]]
                if retry not in tries:
                    tries.append(retry)
                    hinted += 1
            # not for a list or value input, nor for a forward without arguments
            hint = problem is not None and bool(specs) and hinted < 4 and _elements(specs[0]) > 0
            given = len(specs[0].split(":")[0].split("x")) if specs else 0  # forward(self): no input at all
            derived = _derived_rank(problem, given) if problem is not None and specs and _elements(specs[0]) > 0 \
                and grown < 4 else None
            if derived is not None:
                # a tensor made from the input lacked axes: the inputs of the first one's form all that much longer,
                # next (a budget of its own: each step shows only the next reduction that fails)
                for first in _to_rank(specs[0], derived, None)[:1]:
                    retry = [first, *(first if s == specs[0] else s for s in specs[1:])]
                    if retry not in tries:
                        tries.insert(tries.index(specs) + 1, retry)
                        grown += 1
                hint = False
            rank = _rank_hint(problem, given) if hint else None
            firsts = _to_rank(specs[0], rank, None) if rank is not None else (
                _size_hint(_whole(failure, problem), specs[0]) if hint else [])
            if problem is not None and fitted < 2 and specs and ("mat1 and mat2" in problem
                                                                 or _FLAT_VIEW.search(problem)):
                # a classifier built for one input size (a Linear over the flattened features): that size
                fitted += 1
                for retry in _flattened_fits(model, specs, problem, seconds):
                    if retry not in tries:
                        tries.insert(tries.index(specs) + 1, retry)
            if problem is not None and specs and specs[0].startswith(("{", "obj{")) and hinted < 4:
                # a dict input: the rank or size the error names, for its lead key (and a value per sample for the
                # keys that had its form), next (nnue-trainer's ``data["board_input"]``, B x 2 x H x W, beside
                # ``data["stm_input"]``, one per sample)
                for retry in _mapping_retries(problem, specs[0]):
                    retry = [retry, *specs[1:]]
                    if retry not in tries and hinted < 4:
                        tries.insert(tries.index(specs) + 1, retry)
                        hinted += 1
            if firsts:  # the error names the rank (or the size) the model wanted: the same input in that form
                for first in firsts:
                    # the inputs of the first one's form with it, then the first alone: two inputs guessed alike
                    # may be of two forms (latent-i2a's ResConv(state, input): ``state + conv(input)``, the conv
                    # 96 -> 64 channels; PPUU's encoders: frames reshaped by the constructor's sizes, states not)
                    retries = [[first, *(first if s == specs[0] else s for s in specs[1:])], [first, *specs[1:]]]
                    # first, the inputs of its channels at other sizes with it (a skip joined with the upsampled
                    # input: both at the channels the join's convolution takes), next (depth first)
                    alike = [first, *(_channels_as(s, specs[0], first) for s in specs[1:])]
                    if alike not in retries and alike not in tries and others < 10:
                        tries.insert(tries.index(specs) + 1, alike)
                        others += 1
                    for retry in retries:
                        if retry not in tries and hinted < 4:
                            tries.append(retry)
                            hinted += 1
            reshaped = []  # other arguments in the form a shape error names, tried next (depth first)
            sizes = _join_sizes(problem) if failure is not None and len(specs) > 1 else None
            if sizes is not None:
                # a join of two arguments at different resolutions (a UNet's up block: ``x`` upsampled, then
                # ``cat([skip_x, x], dim=1)``: "Expected size 32 but got size 64 for tensor number 1"): each other
                # argument with the axes of the one size at the other
                reshaped += [[*specs[:i], moved, *specs[i + 1:]] for i, spec in enumerate(specs[1:], 1)
                             if (moved := _at_size(spec, *sizes)) is not None]
                # then the other way, for a join whose later tensor is the argument at the other size (a decoder's
                # ``cat([attn * up(conv1), conv2])``: "Expected size 64 but got size 32 for tensor number 1")
                reshaped += [[*specs[:i], moved, *specs[i + 1:]] for i, spec in enumerate(specs[1:], 1)
                             if (moved := _at_size(spec, *sizes[::-1])) is not None and moved not in specs]
            apart = _elementwise_sizes(problem) if failure is not None and len(specs) > 1 else None
            if apart is not None and not any(e.endswith(f": {problem}") for e in input_errors):
                # two arguments meeting in arithmetic at sizes a stride, an upsampling or a projection set apart (an
                # attention gate's ``conv_x(x) + conv_g(g)``, x at twice g's size; a decoder's ``attn * up(conv1)``):
                # each other argument with its axes of the one size at the other (once per error: an argument that
                # leaves the same error is not moved on, its siblings are tried next)
                for i, spec in enumerate(specs[1:], 1):
                    for moved in _other_sizes(spec, *apart):
                        reshaped.append([*specs[:i], moved, *specs[i + 1:]])
            split = _split_join(problem, specs, [p["name"] for p in fwd if p["kind"] == "positional"],
                                int_facts) if failure is not None and len(specs) > 1 else None
            if split is not None:  # inputs joined on their last axis before a layer: widths adding up to its own
                reshaped.append(split)
            if problem is not None and len(specs) > 1 and (sizes := _EINSUM_SIZES.search(problem)):
                # an einsum that meets another argument at a size the first one's axes set apart (a spatial-temporal
                # graph convolution's ``einsum('nkctv,kvw->nctw', x, A)``: its partitions' adjacency guessed over the
                # channels, 3 x 16 x 16, beside N x C x T x V frames of 32 joints: "subscript v has size 16 for
                # operand 1 which does not broadcast with previously seen size 32"): every other argument with its
                # axes of the one size at the other, next
                had, wanted = sizes.groups()
                reshaped += [[*specs[:i], moved, *specs[i + 1:]] for i, spec in enumerate(specs[1:], 1)
                             if (moved := _axes_at(spec, had, wanted)) != spec]
            culprits = getattr(failure, "mp_inputs", None) or set()
            if failure is not None:  # an argument joined after the first one's layers: the width the join leaves
                reshaped += _late_join_hints(problem, specs, culprits)
            if failure is not None and _INDEX_WANTED.search(problem) and specs:
                # a float input the forward uses as indices (mamba-tabular's OneHotEncoding: ``F.one_hot(x,
                # num_classes=self.num_categories)``): the same shape as ids below the smallest count of the model.
                # Which: the argument the refusing layer was given, when it names one (image-caption-pytorch's
                # CaptionModel(im_feat, word_seq) embeds its second; given the first one's 2 x 2048 features, it is
                # a sentence of 16 ids), else the first and those given its form (an NCF's user and item ids).
                # Among them, those the forward hands as ids to a functional lookup when it does (scan.py's use
                # "ids"; the layer last entered may be the model itself, given every argument): UGformerV1's
                # ``F.embedding(input_x, X_concat)`` keeps its table float
                low = min((v for v in int_facts.values() if 2 <= v <= 4096), default=10)
                positional = [p for p in fwd if p["default"] is None and p["kind"] == "positional"]
                which = [i for i, p in enumerate(positional[:len(specs)])
                         if p.get("use") == "ids" and (not culprits or i in culprits)] \
                    or sorted(culprits) or [i for i, spec in enumerate(specs) if spec == specs[0]]
                ids = [(_token_form(spec, specs[0], i) if 0 not in which else spec.partition(":")[0])
                       + f":int64:0:{low}" if i in which and ":float" in spec and spec[:1].isdigit() else spec
                       for i, spec in enumerate(specs)]
                if ids != specs:
                    reshaped.append(ids)
            if failure is not None and _BOOL_WANTED.search(problem) and specs:
                # a mask drawn as float ones where the forward takes a boolean one (``scores.masked_fill_(mask,
                # -1e9)``, tunz/transformer-pytorch's attention: "masked_fill_ only supports boolean masks, but got
                # mask with dtype float", 5 of its 13 classes unbuilt): every constant argument as a boolean mask
                flags = [_as_bool_mask(spec) for spec in specs]
                if flags != specs:
                    reshaped.append(flags)
            if failure is not None and len(specs) > 1 and ("index out of range in self" in problem
                                                           or _INDEX_BOUND.search(problem)):
                # ids out of their table after the model shifted them (per-field offsets), beside another argument:
                # each integer argument from a quarter of its range, next. The first one's own hint does the same
                # (_id_range_hint), but with several arguments the hint budget is spent before this error is met
                # (easezyc/Multitask-Recommendation-Library's models, forward(categorical_x, numerical_x): the ids
                # at one column per field were refused by the table, and no retry followed; 7 of 14 not built)
                fewer = [_fewer_ids(problem, spec) for spec in specs]
                if fewer != specs:
                    reshaped.append(fewer)
            if problem is not None and len(specs) > 1:
                # lengths drawn one per row of a time-major sequence (``pack_padded_sequence(embedded, lengths)``
                # without batch_first: the batch is axis 1; AuCson/PyTorch-Batch-Attention-Seq2seq's EncoderRNN, its
                # T x B ids given B=2 lengths, "Expected `len(lengths)` to be equal to batch_size, but got 2
                # (batch_size=16)"): the lengths as many as that batch, each the sequence's whole length, next
                reshaped += _time_major_lengths(problem, specs)
                # lengths the forward reads as a column, one per row (``caption_lengths.squeeze(1).sort(...)``, the
                # captioning decoders of Renovamen/Image-Captioning, their lengths B x 1): "Dimension out of range
                # (expected to be in range of [-1, 0], but got 1)" of the 1-D lengths drawn; those lengths as B x 1
                reshaped += _column_lengths(problem, specs)
            if failure is not None and len(specs) > 1 and _IDS_FOR_FLOATS.search(problem):
                # ids where a layer of float weights takes the argument ("mat1 and mat2 must have the same dtype, but
                # got Long and Float"): the arguments that layer was given (else every one after the first, whose
                # ids the first layer took) as floats of the same shape, next (Multitask-Recommendation-Library's
                # SingleTaskModel: its numerical_x guessed ids beside the categorical ids, into a Linear); when no
                # layer was seen taking an argument as given (it was indexed first: ``encoder_out[sort_ind]``), each
                # one alone after that (Image-Captioning's decoders: the image features ``encoder_out`` beside the
                # caption ids and their lengths, all drawn as ids after the decoder's first layer, an Embedding)
                # (a list of such tensors too: adaptive_att's ``encoder_out`` is [spatial features, global feature])
                which = sorted(culprits) if culprits else range(1, len(specs))
                for chosen in [which, *([] if culprits else [[i] for i in range(len(specs))])]:
                    floats = [_as_floats(spec) if i in chosen else spec for i, spec in enumerate(specs)]
                    if floats != specs and floats not in reshaped:
                        reshaped.append(floats)
            if len(specs) > 1 and culprits and 0 not in culprits:
                # a shape error about another argument, given to the layer that refused it (a time series'
                # time-feature marks, Autoformer's ``x_mark_enc`` at its ``Linear(4, d_model)`` beside the series
                # it marks): that argument in the form the error names (the encoder's marks, then the decoder's)
                reshaped += [[*specs[:i], other, *specs[i + 1:]] for i, spec in enumerate(specs[1:], 1)
                             if i in culprits and spec[:1].isdigit() and _elements(spec) > 0
                             for other in _size_hint(problem, spec)[:1]]
            others += _insert_next(tries, specs, reshaped, 10 - others)
            if problem is None:
                result.update(status="built", ctor=ctor, ctor_source=origin, inputs=specs, params=n_params,
                              build_seconds=round(time.perf_counter() - t, 3),
                              input_source="container call" if specs in handed else
                              "repository" if specs in cand["inputs"] else "first layer")
                if recording:
                    _record_forward_inputs(model, specs, watch, root, work, observed, calls, seconds)
                return result
            input_errors.append(f"{' '.join(specs)}: {problem}")
        if not seen:
            errors.append(f"{origin} ({ctor}): built; no input form known (no call in the repository, no "
                          "first layer of a known kind)")
        else:
            errors.append(f"{origin} ({ctor}): built; no input ran: " + "; ".join(input_errors[:3]))
            larger(origin, ctor, input_errors)
        if result.get("fallback") is None:
            result["fallback"] = {"ctor": ctor, "ctor_source": origin}
    if not errors:
        errors.append("no constructor arguments could be chosen (required parameters of unknown kind: "
                      + ", ".join(p["name"] for p in cand["params"] if p["default"] is None) + ")")
    result["reason"] = errors[0] if len(errors) == 1 else " | ".join(errors[:4])
    result["attempts"] = len(errors)
    if raised and all(raised):
        # an abstract base whose forward (or a method it calls) subclasses implement: ``raise NotImplementedError``
        # met at run time (kaniblu/pytorch-models' AbstractGaussianSampling, whose forward calls an abstract method:
        # scan.discover's rule reads the forward's own body only); no model, as the bases discover() leaves out
        result["abstract"] = True
    return result


# a forward's input too small for its kernels and strides, and the constructor argument that fixes an image's size
_TOO_SMALL = re.compile(r"Kernel size can't be greater than actual input size|Output size is too small|"
                        r"input image is smaller than kernel")
_IMAGE_SIZE_ARG = re.compile(r"\b((?:img|image)_?(?:size|res|resolution|dim)|resolution)=(\d+)\b")

# an error of a float tensor used where torch takes indices
_INDEX_WANTED = re.compile(r"one_hot is only applicable to index tensor|tensors used as indices must be long|"
                           r"expected scalar type Long|'indices' to have one of the following scalar types|"
                           r"Expected dtype int(32/int)?64 for index")  # the last: scatter_ (an NCF's one-hot ids)

# an error of a tensor used as a mask that is not boolean (masked_fill, masked_select, where)
_BOOL_WANTED = re.compile(r"only supports boolean masks|expected BoolTensor for mask|condition to be a boolean tensor|"
                          r"mask must be a bool|expected mask dtype to be Bool")


# pack_padded_sequence's refusal of lengths that do not count its batch (axis 1 of a time-major sequence)
_PACKED_BATCH = re.compile(r"Expected `len\(lengths\)` to be equal to batch_size, but got (\d+) \(batch_size=(\d+)\)")


def _time_major_lengths(problem: str, specs: list[str]) -> list[list[str]]:
    """The inputs with every lengths argument (a constant integer vector, ``2:int64:16:16``, of the size the error
    says it had) counting the batch pack_padded_sequence read instead, each length the sequence's whole length: the
    first input's axis 0 when its axis 1 is that batch (time-major ``T x B`` ids or ``T x B x F`` features). []
    when the error does not say so or no argument fits."""
    m = _PACKED_BATCH.search(problem)
    dims = specs[0].split(":")[0].split("x") if specs and specs[0][:1].isdigit() else []
    if m is None or len(dims) < 2 or dims[1] != m.group(2):
        return []
    got, batch, steps = m.group(1), m.group(2), dims[0]
    lengths = [f"{batch}:int64:{steps}:{steps}" if re.fullmatch(rf"{got}:int\d+:(\d+):\1", spec) else spec
               for spec in specs]
    lengths[0] = specs[0]
    return [lengths] if lengths != specs else []


# an axis 1 asked of a tensor of one axis (``lengths.squeeze(1)``, ``lengths[:, 0]``)
_SECOND_AXIS_OF_VECTOR = re.compile(r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)")


def _column_lengths(problem: str, specs: list[str]) -> list[list[str]]:
    """The inputs with every lengths argument after the first (a constant integer vector, ``2:int64:16:16``) as a
    column of one length per row (``2x1:int64:16:16``), when the error is an axis 1 asked of a vector. [] when it is
    not or no argument fits."""
    if not _SECOND_AXIS_OF_VECTOR.search(problem):
        return []
    columns = [specs[0], *(f"{m.group(1)}x1:{m.group(2)}" if (m := re.fullmatch(r"(\d+):(int\d+:(\d+):\3)", spec))
                           else spec for spec in specs[1:])]
    return [columns] if columns != specs else []


# einsum's refusal of an operand whose axis disagrees in size with the same subscript seen before
_EINSUM_SIZES = re.compile(r"einsum\(\): subscript \w has size (\d+) for operand \d+ which does not broadcast with "
                           r"previously seen size (\d+)")


def _axes_at(spec: str, had: str, wanted: str) -> str:
    """``spec`` (a shape with a dtype) with every axis after the first of size ``had`` at ``wanted`` (the first too
    when it is the only one), within MAX_ELEMENTS; ``spec`` itself otherwise."""
    shape, sep, rest = spec.partition(":")
    if not re.fullmatch(r"\d+(x\d+)*", shape):
        return spec
    dims = shape.split("x")
    moved = [wanted if d == had and (i or len(dims) == 1) else d for i, d in enumerate(dims)]
    out = "x".join(moved) + sep + rest
    return out if _elements(out) <= MAX_ELEMENTS else spec


def _as_bool_mask(spec: str) -> str:
    """A constant tensor spec of ones or zeros (``2x1x16:float32:1:1``, a mask of ones) as a boolean mask of its
    shape; others (lengths: ``2:int64:16:16``) as they are."""
    m = re.fullmatch(r"([\dx]+):(?:float\d+|u?int\d+):([01](?:\.0)?):\2", spec)
    return f"{m.group(1)}:bool" if m else spec


# an error of a value used as a tensor (or a number, a sequence) that was None
_NONE_USE = re.compile(r"'NoneType' object|NoneType' and|and 'NoneType'|NoneType")


def _none_names(exc: BaseException) -> list[str]:
    """The names bound to None on the lines the error passed through, innermost frame first: the argument a forward
    left at its default and then used (``batch_positions.unsqueeze(-1)`` with ``batch_positions=None``)."""
    import linecache

    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    names: list[str] = []
    for frame, line in reversed(frames):
        text = linecache.getline(frame.f_code.co_filename, line)
        for name in re.findall(r"[A-Za-z_]\w*", text):
            if name in frame.f_locals and frame.f_locals[name] is None and name not in names:
                names.append(name)
    return names


def _optional_tensor_inputs(model, fwd_params: list[dict], specs: list[str], none_names: list[str]) -> list[list[str]]:
    """Inputs that also give a tensor to a forward argument whose default is None when the forward failed on a None
    (UTAE's ``forward(input, batch_positions=None)`` hands ``batch_positions`` to its temporal encoder, which calls
    ``batch_positions.unsqueeze(-1)``): the arguments the error names as None on its way (``_none_names``) first, by
    name, then the others left at None (two at most); the arguments between keep their defaults (``value:``).
    Forms: the layer the forward hands it to, a mask's forms by its name, then the first input's leading axes (a
    value per sample and step: ``B x T`` of a ``B x T x C x H x W`` input; per sample: ``B``), the argument's own
    rank, the first input's form. [] when the first input has no shape."""
    positional = [p for p in fwd_params if p["kind"] == "positional"]
    first = specs[0] if specs else ""
    shape, _, rest = first.partition(":")
    if not re.fullmatch(r"\d+(x\d+)*", shape) or len(specs) >= len(positional):
        return []
    left = [(i, p) for i, p in enumerate(positional) if i >= len(specs) and p["default"] == "None"]
    named = sorted((x for x in left if x[1]["name"] in none_names), key=lambda x: none_names.index(x[1]["name"]))
    others = [x for x in left if x not in named and not re.match(r"(return|use|is|with|output)_", x[1]["name"])]
    dims = [int(v) for v in shape.split("x")]
    out = []
    for i, p in (named + others)[:2]:
        fill = []
        for q in positional[len(specs):i]:
            if q["default"] is None or not re.fullmatch(r"None|True|False|-?\d+(\.\d+)?|'[^']*'|\"[^\"]*\"", q["default"]):
                break
            fill.append(f"value:{q['default']}")
        if len(fill) != i - len(specs):
            continue
        handed = _handed_layer(model, p)
        forms = _handed_forms(handed, dims, rest.startswith("int")) if handed is not None else []
        low = p["name"].lower()
        if "mask" in low:
            forms += _extra_inputs(low, first)
        forms += ["x".join(map(str, dims[:k])) + ":float32" for k in (2, 1, 3) if k < len(dims)]
        if p.get("rank"):
            forms += _to_rank(f"{shape}:float32", p["rank"], None)
        forms.append(f"{shape}:float32")
        for form in list(dict.fromkeys(forms))[:4]:
            out.append([*specs, *fill, form])
    return out


def _record_forward_inputs(model, specs: list[str], watch, root: str, work: str, observed: dict, calls,
                           seconds: float) -> None:
    """The built model's forward once more on the inputs it ran with, recording what it hands the sub-modules of the
    classes in ``watch`` (forward_inputs.py), each with the constructor text ``calls`` recorded for it."""
    import torch

    from mindport.discovery.call_sites import _Unrenderable
    from mindport.discovery.forward_inputs import ForwardRecorder
    from mindport.validators.parity.loading import make_inputs, parse_input_spec

    def ctor_of(module):
        built = calls._built.get(id(module)) if calls is not None else None
        if built is None or built[0] is not module:
            return None
        namespace = vars(sys.modules.get(type(module).__module__) or object)
        try:
            return calls.arguments(built[1], dict(namespace))
        except (_Unrenderable, RecursionError):
            return None

    arrays = make_inputs([parse_input_spec(s) for s in specs], seed=1)
    try:
        _alarm(seconds)
        try:
            with ForwardRecorder(model, watch, root, os.path.join(work, "inputs"), observed, ctor_of), \
                    torch.no_grad():
                model(*torch_inputs(arrays))
        finally:
            _no_alarm()
    except BaseException as exc:  # noqa: BLE001 - the model already ran once: nothing recorded is all
        if isinstance(exc, KeyboardInterrupt):
            raise


def _whole(exc: BaseException | None, problem: str, limit: int = 1000) -> str:
    """``problem`` with the lines of ``exc``'s message after its first, for the size hints: a repository's own error
    may give its numbers on a second line ("Input size has to be larger than receptive_fields\nInput size: 32,
    Receptive fields size: 62")."""
    if exc is None:
        return problem
    rest = f"{exc}".splitlines()[1:]
    return "\n".join([problem, *rest])[:limit] if rest else problem


def _short(exc: BaseException, limit: int = 300) -> str:
    """One line for a failure. A build that raised (``InputError`` from ``build_model``, whose message first repeats
    the constructor call) is named by its cause, first: ``TypeError: ... (at file.py:12)``, so that the cause is not
    cut off."""
    cause = exc.__cause__
    if cause is not None and type(exc).__name__ == "InputError" and "failed" in str(exc):
        from mindport.validators.parity.hooks import raise_site

        site = raise_site(cause)
        text = f"{type(cause).__name__}: {cause}".splitlines()
        head = text[0] if text else type(cause).__name__
        return (head[:limit - 60] + (f" (at {site.rsplit('/', 1)[-1]})" if site else ""))[:limit]
    text = f"{type(exc).__name__}: {exc}".splitlines()
    return (text[0] if text else type(exc).__name__)[:limit]


def _stand_ins_of(root: str, rel: str) -> list[str]:
    """The missing packages (``stubs``' stand-ins) the module of ``root/rel`` binds names to, in the order it binds
    them: ``import einx`` (a stand-in module), ``from colt5_attention import topk`` (a stand-in class); then those of
    the project's modules it binds names from, breadth-first (benedekrozemberczki/MixHop-and-N-GCN's networks module
    imports its layers module, which imports ``torch_sparse.spmm``: the networks were reported with an IndexError
    alone). Empty when the module was not imported or none of them uses one."""
    from mindport.discovery.stubs import STUBBED, _StubMeta, _StubModule

    top_dir = os.path.realpath(root) + os.sep

    def project_file(module) -> str | None:
        name = getattr(module, "__file__", None)
        if not isinstance(name, str) or isinstance(module, _StubModule):
            return None
        path = os.path.realpath(name)
        return path if path.startswith(top_dir) else None

    by_file = {}
    for m in list(sys.modules.values()):
        path = project_file(m)
        if path is not None:
            by_file.setdefault(path, m)
    first = by_file.get(os.path.realpath(os.path.join(root, rel)))
    out: list[str] = []
    todo, seen = ([first] if first is not None else []), set()
    while todo:
        module = todo.pop(0)
        if id(module) in seen:
            continue
        seen.add(id(module))
        for value in list(vars(module).values()):
            if isinstance(value, _StubModule):
                top = value.__name__.split(".")[0]
            elif isinstance(value, _StubMeta):  # a missing package's class, or a name its installed library lacks
                top = value.__qualname__ if value.__qualname__ in STUBBED else value.__qualname__.split(".")[0]
            else:
                # a project module bound whole, or a class or function of one (``from layers import NGCNLayer``)
                home = value if isinstance(value, types.ModuleType) else sys.modules.get(
                    getattr(value, "__module__", None) or "") if isinstance(value, (type, types.FunctionType)) else None
                if home is not None and project_file(home) is not None and id(home) not in seen:
                    todo.append(home)
                continue
            if top in STUBBED and top not in out:  # (a stand-in's own attribute's class is named by the attribute)
                out.append(top)
    return out


RECORD_BUDGET = 90.0  # seconds for all meta builds that record call sites (the parent waits for a first result)


def record_call_sites(candidates: list[dict], user_ctors: dict, root: str, seconds: float,
                      budget: float = RECORD_BUDGET, context: list[dict] = ()) -> None:
    """Each candidate built on the meta device at its first constructor attempts that build (at most three),
    recording the calls of the candidates' ``__init__`` the repository's code makes meanwhile (call_sites.py); each
    candidate's ``recorded`` is the list of those calls' argument texts, in place. The calls a class makes of itself
    at the builder's own guesses are not kept (its first attempt would only repeat them). ``context``: other
    candidates (of the same files, not asked for) built only to record the calls they make."""
    import torch

    from mindport.discovery.call_sites import MAX_CALLS, CallRecorder
    from mindport.discovery.scan import model_ref
    from mindport.validators.parity.loading import build_model

    keys = [f"{c['rel']}:{c['name']}" for c in candidates if c.get("kind", "class") == "class"]
    start = time.perf_counter()
    seen: dict[str, list[str]] = {}
    builds: dict[str, set] = {}  # the candidates each one builds (its blocks), read from the same recording
    # the candidates' classes first (the containers that build blocks), their factories, then the other classes and
    # factories of their files, while time is left
    order = [*candidates, *context]
    for cand in sorted(order, key=lambda c: (order.index(c) >= len(candidates), c.get("kind", "class") != "class")):
        key = f"{cand['rel']}:{cand['name']}"
        ref = model_ref(root, cand["rel"], cand["name"], cand.get("dotted", ""))
        for _origin, ctor in ctor_attempts(cand, user_ctors.get(key))[:3]:
            left = budget - (time.perf_counter() - start)
            if left <= 0:
                break
            recorder = CallRecorder(root, [k for k in keys if k != key])
            try:
                with _Limited(min(seconds, left, 5.0)), recorder, torch.device("meta"):
                    build_model(ref, ctor, root=root, isolated=True)
                built = True
            except BaseException as exc:  # noqa: BLE001 - the calls made before the failure are the repository's
                if isinstance(exc, KeyboardInterrupt):
                    raise
                built = False
            builds.setdefault(key, set()).update(k for k in recorder.calls if k != key)
            for other, texts in recorder.calls.items():
                kept = seen.setdefault(other, [])
                kept += [t for t in texts if t not in kept][:max(0, MAX_CALLS - len(kept))]
            if built:
                break
    for cand in candidates:
        cand["recorded"] = seen.get(f"{cand['rel']}:{cand['name']}", [])
        cand["builds"] = sorted(builds.get(f"{cand['rel']}:{cand['name']}", ()))


def main(request_path: str, result_path: str) -> None:
    import resource

    request = json.loads(open(request_path, encoding="utf-8").read())
    limit = int(request.get("memory_bytes", 6 * 1024 ** 3))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    _no_network()
    if request.get("stub_missing"):
        from mindport.discovery import stubs

        stubs.install([request["root"]])
    import torch

    from mindport.discovery import cuda_cpu, eager_compile, legacy_names, legacy_torch, zeroed_memory

    legacy_torch.install()  # torch._six for code written for torch 1.x (removed in torch 2.0)
    zeroed_memory.install()  # torch.empty and kin as zeros, as the port writes them
    eager_compile.install()  # torch.compile as the model itself, as the port maps it
    legacy_names.install()  # collections.Sequence, np.float, scipy.signal.hann ... (removed from Python/NumPy/SciPy)

    cuda_cpu.install()  # CUDA-only code (.cuda(), device='cuda') is built and run on the CPU, as the proof's torch side
    from mindport.discovery import scripts

    scripts.install()  # a script that trains at module level is imported as its definitions, as the proof's sides do
    torch.set_num_threads(int(request.get("threads", 1)))
    root = request["root"]
    sys.path.insert(0, root)
    from mindport.discovery.script_paths import import_roots

    for rel in import_roots(root):  # the folders its shell scripts export and its imports need: last
        sys.path.append(os.path.join(root, rel))
    record_call_sites(request["candidates"], request.get("ctors", {}), root, float(request.get("seconds", 30)),
                      context=request.get("context", []))
    # containers before the blocks they build (their forward records the blocks' inputs); each candidate announced
    # before it is tried, so that the parent knows which one stopped the process
    candidates = request["candidates"]
    keys = {f"{c['rel']}:{c['name']}" for c in candidates}
    order = sorted(candidates, key=lambda c: -len([k for k in c.get("builds", ()) if k in keys]))
    observed: dict = {}
    work = request.get("work")
    facts_path = request.get("facts")
    recorder = None
    if facts_path:  # the torch calls of the root's files while the candidates are built and run (mindport.observed):
        # the conversion's facts (migrate without a model converts again with them before the proofs)
        from mindport.observed import record

        recorder = record(root)
        facts = recorder.__enter__()
    with open(result_path, "a", encoding="utf-8") as out:
        for cand in order:
            start = time.perf_counter()
            key = f"{cand['rel']}:{cand['name']}"
            out.write(json.dumps({"class": key, "started": True}) + "\n")
            out.flush()
            try:
                res = build_one(cand, request.get("ctors", {}).get(key), root,
                                float(request.get("seconds", 30)), int(request.get("max_params", MAX_PARAMS)),
                                observed=observed, watch=[k for k in keys if k != key],
                                work=work)
            except MemoryError:
                res = {"class": f"{cand['rel']}:{cand['name']}", "status": "not-built",
                       "reason": "out of memory while building"}
            except Exception as exc:  # noqa: BLE001 - a fault of ours on one candidate is its reason, not the run's
                res = {"class": f"{cand['rel']}:{cand['name']}", "status": "not-built",
                       "reason": f"the builder failed on it: {_short(exc)}"}
            res["seconds"] = round(time.perf_counter() - start, 3)
            if request.get("stub_missing") and res.get("status") == "built":
                from mindport.discovery.stubs import STUBBED

                if STUBBED:
                    res["stubbed"] = list(STUBBED)  # stubbed in this repository's process so far
            elif request.get("stub_missing") and res.get("status") != "built":
                lacking = _stand_ins_of(root, cand["rel"])
                if lacking:  # the reason alone ("Tensor type unknown to einops <class '..._StubMeta'>") never says
                    # that a package is missing here, nor which (lucidrains/st-moe-pytorch: einx, colt5_attention)
                    res["stubbed"] = lacking
                    res["reason"] = (f"{res.get('reason', 'not built')} (its module imports packages not installed "
                                     f"here, given stand-ins: {', '.join(lacking)})")
            if recorder is not None:  # before the result: a crash later keeps what this candidate's runs saw
                facts.save(facts_path)
            out.write(json.dumps(res, default=str) + "\n")
            out.flush()
    if recorder is not None:
        recorder.__exit__(None, None, None)


if __name__ == "__main__":  # pragma: no cover - the builder process
    _args = sys.argv[1:3]
    # a model module that parses its command line at import (NRI's lstm_baseline.py: parser.parse_args() at top
    # level) gets its defaults, as when the repository's script runs without options, not our two paths
    sys.argv = sys.argv[:1]
    from mindport.validators.parity.worker import exit_with_parent

    exit_with_parent()
    main(*_args)
