"""Discovery, read with ``ast`` (nothing is imported): every ``nn.Module`` subclass and every model factory of a
repository, the constructor calls and inputs the repository itself writes for them, and the facts the builder needs
to try the rest (required parameters with their annotations, argparse defaults).

A *factory* is a top-level function that needs no argument and returns a model: its body returns a call of a
module class (or of another factory) of the project, ``def resnet18(**kw): return ResNet(BasicBlock, [2, 2, 2, 2])``.
A *registry* (``model_dict = {"resnet18": resnet18, "vgg": partial(VGG, cfg="A")}``) adds nothing to discover by
itself (its values are discovered as classes and factories) but its ``partial(Class, ...)`` values are constructor
calls written by the repository, used like any other.
"""
from __future__ import annotations

import ast
import copy
import hashlib
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from mindport.discovery.notebooks import code_tree as notebook_code_tree
from mindport.discovery.notebooks import defined_names as notebook_defined_names
from mindport.discovery.notebooks import is_notebook
from mindport.migrator.project import class_bases, module_classes_from_bases

_SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", "env", "site-packages", "node_modules", "build", "dist",
              ".tox", ".eggs", "mindport_scripts", "mindport_export", "mindport-logs"}
# Module subclasses that are not models to prove: containers and framework plumbing re-implemented in a repository
_NOT_MODELS = {"Module", "ModuleList", "ModuleDict", "Sequential", "ParameterList", "ParameterDict"}
_TENSOR_MAKERS = {"randn": "float32", "rand": "float32", "zeros": "float32", "ones": "float32", "empty": "float32",
                  "randint": "int64", "randn_like": None, "FloatTensor": "float32", "LongTensor": "int64"}
# keyword options of torch's own layers and functions that take a bool
_TORCH_SWITCHES = {"requires_grad", "batch_first", "bidirectional", "affine", "track_running_stats", "inplace",
                   "ceil_mode", "count_include_pad", "align_corners", "keepdim"}
_MAX_LITERAL = 400  # characters of a constructor call kept as a candidate


@dataclass
class Param:
    name: str
    annotation: str = ""
    default: str | None = None  # source text, None when required
    kind: str = "positional"  # positional, keyword, var_positional, var_keyword
    choices: list = field(default_factory=list)  # string values the function compares it with ('LSTM', 'GRU')
    # how the class uses it (``_usage``): "namespace" (attributes read: ``args.hidden``), "mapping" (``**cfg``,
    # ``cfg["k"]``, ``cfg.get``), "sequence" (iterated, indexed, ``len``), "callable" (called), "number" (in
    # arithmetic, an order comparison, ``range``, ``num_layers=``: no sequence use), "" (not known)
    use: str = ""
    attrs: dict = field(default_factory=dict)  # namespace attributes / mapping keys read -> a literal default or None
    passes: list = field(default_factory=list)  # (class name, position or keyword) it is handed on to
    rank: int = 0  # a forward argument's number of dimensions as the forward reads it (``_ranks``), 0 unknown
    length: int = 0  # a sequence's length as the class reads it (``a, b, c = p``, ``p[3]``, ``len(p) == 3``)
    len_of: str = ""  # a count the class checks against a sequence's length (``num_branches != len(blocks)``)
    # [other, k]: the class checks this sequence's length against another's (``assert len(dimNodeSignals) ==
    # len(nFilterTaps) + 1``): len(this) == len(other) + k
    len_rel: list = field(default_factory=list)
    # a forward argument's sizes the forward requires (``assert x.size(1) == 2``, ``if x.shape[-1] != 3: raise``):
    # [axis, size] pairs (``_asserted_sizes``)
    sizes: list = field(default_factory=list)
    layer: str = ""  # a forward argument's first consumer: the attribute ``X`` of the first ``self.X(arg)`` call
    # a per-layer argument of a stack (``_layer_checks``): "tuple" (the class accepts one tuple: ``isinstance(k,
    # tuple)``), "one" (a single value it repeats per layer: ``if not isinstance(k, list): k = [k] * num_layers``)
    accepts: str = ""
    item: int = 0  # the length of the tuples its per-layer items are (``all(isinstance(e, tuple) for e in k)``: 2)
    item_passes: list = field(default_factory=list)  # (class name, position or keyword) an item of it goes to
    # a sequence unpacked into names (``graph_conv_dim, aux_dim, linear_dim = conv_dim``) that the class reads as
    # sequences themselves (``graph_conv_dim[-1]``, ``for c in linear_dim``): "sequence" at those positions, "" at the
    # others (``_unpacked_items``; MolGAN's Discriminator)
    items: list = field(default_factory=list)
    nested: list = field(default_factory=list)  # a forward argument unpacked (``a, b = input``) whose items are
    # unpacked again (``out, mask = a``): each item's own length, 0 for a tensor (PSE's ``((pixels, mask), extra)``)
    # a constructor number some method uses as a count or a size (``x.repeat(1, 1, self.y_scale)``, ``x.view(b, h *
    # self.y_scale)``, ``range(self.n)``): an int there (WaveRNN's Stretch2d(x_scale, y_scale): 1.0 met "repeat():
    # argument 'repeats' ... must be tuple of ints, but got float")
    count: bool = False


@dataclass
class Candidate:
    rel: str  # path relative to the repository, "/" separated
    name: str
    kind: str  # "class" or "factory"
    line: int
    params: list[Param] = field(default_factory=list)  # __init__'s (classes) or the function's (factories)
    forward: list[Param] = field(default_factory=list)  # forward's parameters (classes)
    doc: str = ""  # the class's and forward's docstrings (shape hints)
    ctors: list[str] = field(default_factory=list)  # constructor argument texts the repository writes
    # a repository call with arguments computed from data (``Encoder(INPUT_DIM, 256, ...)`` after ``INPUT_DIM =
    # len(SRC.vocab)``): its literal arguments by parameter name, the others left to the builder's small values
    partial_ctors: list[dict] = field(default_factory=list)
    inputs: list[list[str]] = field(default_factory=list)  # input specs of calls the repository writes
    bases: list[str] = field(default_factory=list)
    configs: list[str] = field(default_factory=list)  # the module's configuration classes (GPTConfig, ModelArgs)
    config_fields: dict = field(default_factory=dict)  # configuration class -> its fields (``_config_fields``)
    dotted: str = ""  # "models.convnext": imported by this name from the root (a relative import, no __init__.py)
    expansion: int = 0  # a block's class-level ``expansion = 4``: its output has planes * expansion channels
    own: tuple = (True, True)  # (defines __init__, defines forward) itself: else a project base's (``_inherit``)
    # a project class its file imports under another name (``from .decoder import Decoder as BasicDecoder``): the
    # alias -> (file, the class's own name), so a base or a callee so named is that class (``_named_class``)
    imported: dict = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.rel}:{self.name}"

    def required(self) -> list[Param]:
        return [p for p in self.params if p.default is None and p.kind in ("positional", "keyword")]

    def to_json(self) -> dict:
        return {"class": self.key, "kind": self.kind, "line": self.line, "bases": self.bases,
                "params": [vars(p) for p in self.params], "forward": [vars(p) for p in self.forward],
                "doc": self.doc[:600], "ctors": self.ctors, "partial_ctors": self.partial_ctors, "inputs": self.inputs, "configs": self.configs,
                "config_fields": self.config_fields,
                "dotted": self.dotted, "expansion": self.expansion}


def python_files(root: Path, notebooks: bool = False) -> list[str]:
    """The repository's Python files (relative, sorted), without tool folders and hidden ones (``.ipynb_checkpoints``
    too); with ``notebooks``, its Jupyter notebooks as well (``notebooks.py``: their models are discovered too)."""
    suffixes = (".py", ".ipynb") if notebooks else (".py",)
    out = []
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            items = sorted(folder.iterdir())
        except OSError:
            continue
        for item in items:
            if item.is_symlink():
                continue
            if item.is_dir():
                if item.name not in _SKIP_DIRS and not item.name.startswith("."):
                    stack.append(item)
            elif item.suffix in suffixes and item.is_file():
                out.append(item.relative_to(root).as_posix())
    return sorted(out)


def _parse(root: Path, rel: str):
    """(tree, bytes) of a Python file, or of a notebook's code cells together (``notebooks.code_tree``)."""
    try:
        data = (root / rel).read_bytes()
        if is_notebook(rel):
            return notebook_code_tree(data), data
        if len(data) > 1_000_000:
            return None, b""
        return ast.parse(data), data
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None, b""


def _params(args: ast.arguments, skip_first: bool) -> list[Param]:
    out: list[Param] = []
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for i, (a, d) in enumerate(zip(positional, defaults)):
        if skip_first and i == 0:
            continue
        out.append(Param(a.arg, ast.unparse(a.annotation) if a.annotation else "",
                         ast.unparse(d) if d is not None else None))
    if args.vararg:
        out.append(Param(args.vararg.arg, kind="var_positional", default=""))
    for a, d in zip(args.kwonlyargs, args.kw_defaults):
        out.append(Param(a.arg, ast.unparse(a.annotation) if a.annotation else "",
                         ast.unparse(d) if d is not None else None, kind="keyword"))
    if args.kwarg:
        out.append(Param(args.kwarg.arg, kind="var_keyword", default=""))
    return out


def _kwargs_keys(func, params: list[Param]) -> None:
    """The keys a function reads from its ``**kwargs`` by subscript (``pretrained=kwargs['pretrained']``: a KeyError
    without it), in the var-keyword parameter's ``attrs`` (key -> None); the builder passes them by name."""
    var = next((p for p in params if p.kind == "var_keyword"), None)
    if var is None:
        return
    for node in ast.walk(func):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) \
                and node.value.id == var.name and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str) and node.slice.value.isidentifier():
            var.attrs.setdefault(node.slice.value, None)


def _module_tables(tree) -> dict[str, list]:
    """The module's dict literals whose keys are all constants (``configs = {0.5: {...}, 1: {...}}``): name -> keys."""
    tables = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Dict) and node.value.keys \
                and all(isinstance(k, ast.Constant) and type(k.value) in (str, int, float) for k in node.value.keys):
            tables[node.targets[0].id] = [k.value for k in node.value.keys]
    return tables


def _choices(func, params: list[Param], tables: dict[str, list] | None = None, residues: bool = False,
             helpers: dict | None = None, methods: tuple = ()) -> None:
    """String constants a required parameter is compared with in the function (``if rnn_type == 'LSTM'``,
    ``assert mode in ('a', 'b')``, ``getattr(nn, rnn_type)``-free): its possible values, in source order. A parameter
    that is a key of one of the module's ``tables`` (``configs[net_size]``) takes that table's keys; with ``residues``
    (a constructor), a count it requires in a residue class (``_residue``) takes the smallest such value; with
    ``helpers`` (the module's functions by name), the values a function it is handed to compares it with too; with
    ``methods`` (the class's other methods), what they compare the attribute it is kept in with (imethanlee/STGCN's
    ``self.approx = approx``, then ``if self.approx == "linear":`` in forward)."""
    names = {p.name: p for p in params if p.default is None}
    kept = {t.attr: n.value.id for n in ast.walk(func) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name)
            and n.value.id in names for t in n.targets if isinstance(t, ast.Attribute)
            and isinstance(t.value, ast.Name) and t.value.id == "self"}  # self.X = param: compared as self.X
    if residues:
        for name, value in _accepted_numbers(func, names):
            if value not in names[name].choices:
                names[name].choices.append(value)
    for node in ast.walk(func):
        if tables and isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and node.value.id in tables and isinstance(node.slice, ast.Name) and node.slice.id in names:
            for v in tables[node.value.id]:
                if v not in names[node.slice.id].choices:
                    names[node.slice.id].choices.append(v)
            continue
        residue = _residue(node, names) if residues else None
        if residue is not None:  # assert (depth - 4) % 6 == 0: the smallest such depth past the offset (10)
            name, value = residue
            if value not in names[name].choices:
                names[name].choices.append(value)
            continue
        _compared(node, names, kept)
    for method in methods:
        for node in ast.walk(method):
            _compared(node, names, kept)
    if helpers:
        _helper_choices(func, names, helpers)


def _compared(node, names: dict[str, Param], kept: dict[str, str]) -> None:
    """The string constants a comparison ``node`` tests a parameter (or the ``self`` attribute it is ``kept`` in)
    against, added to its choices; and the strings the class looks for in it (``conv_index.find('22') >= 0``,
    ``name.startswith('vgg')``, ``'bn' in norm``: EDSR's VGG loss, whose ``conv_index`` was guessed a namespace):
    the first one makes the search succeed, the class's own first branch."""
    searched = None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SEARCHES \
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        searched, text = node.func.value, node.args[0].value
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In) \
            and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
        searched, text = node.comparators[0], node.left.value
    if isinstance(searched, ast.Attribute) and isinstance(searched.value, ast.Name) and searched.value.id == "self" \
            and searched.attr in kept:
        searched = ast.Name(id=kept[searched.attr])
    if isinstance(searched, ast.Name) and searched.id in names:
        if text not in names[searched.id].choices:
            names[searched.id].choices.append(text)
        return
    left = node.left if isinstance(node, ast.Compare) else None
    if isinstance(left, ast.Call) and isinstance(left.func, ast.Attribute) and left.func.attr in (
            "lower", "upper", "strip"):  # rnn_type.lower() == "lstm"
        left = left.func.value
    if isinstance(left, ast.Attribute) and isinstance(left.value, ast.Name) and left.value.id == "self" \
            and left.attr in kept:  # self.pool_type = pool_type; if self.pool_type == 'avg': (proxylessnas)
        left = ast.Name(id=kept[left.attr])
    if isinstance(left, ast.Name) and left.id in names:
        for op, right in zip(node.ops, node.comparators):
            values = []
            if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(right, ast.Constant):
                values = [right.value]
            elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                values = [e.value for e in right.elts if isinstance(e, ast.Constant)]
            for v in values:
                if isinstance(v, str) and v not in names[left.id].choices:
                    names[left.id].choices.append(v)


def _helper_choices(func, names: dict[str, Param], helpers: dict) -> None:
    """A required parameter handed to a function of the module that compares it (srpkdyy/pytorch-models' VGG
    ``make_arch(net_type)``, which tests ``net_type == 'C'``): that function's string values, as its own."""
    for node in ast.walk(func):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers):
            continue
        helper = helpers[node.func.id]
        hparams = _params(helper.args, False)
        handed = [(hparams[i].name, a.id) for i, a in enumerate(node.args[:len(hparams)])
                  if isinstance(a, ast.Name) and a.id in names]
        handed += [(k.arg, k.value.id) for k in node.keywords if k.arg and isinstance(k.value, ast.Name)
                   and k.value.id in names]
        for inner, outer in handed:
            probe = Param(inner)
            _choices(helper, [probe])
            names[outer].choices += [v for v in probe.choices if v not in names[outer].choices]


def _raises(body) -> bool:
    """The block raises first thing (``raise NotImplementedError``, ``assert False, ...``), after any logging call."""
    for stmt in body:
        if isinstance(stmt, ast.Raise) or (isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Constant)
                                           and not stmt.test.value):
            return True
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Call, ast.Constant))):
            return False
    return False


def _numbers_tested(test, names, negated: bool = False) -> list[tuple[str, int | float]]:
    """(name, number) a test accepts: ``p == 16``, ``p in (8, 16)``, either side of an ``or``; with ``negated``
    (the test guards a raise) ``p != 16``, ``p not in (8, 16)``, either side of an ``and``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And if negated else ast.Or):
        return [pair for v in test.values for pair in _numbers_tested(v, names, negated)]
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return []
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(right, ast.Name) and right.id in names and not isinstance(op, (ast.In, ast.NotIn)):
        left, right = right, left  # 16 == p
    if not (isinstance(left, ast.Name) and left.id in names):
        return []
    equal, member = (ast.NotEq, ast.NotIn) if negated else (ast.Eq, ast.In)
    if isinstance(op, equal):
        elts = [right]
    elif isinstance(op, member) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
        elts = right.elts
    else:
        return []
    values = [_int_const(e) if _int_const(e) is not None else e.value if isinstance(e, ast.Constant)
              and type(e.value) is float else None for e in elts]
    return [(left.id, v) for v in values if v is not None]


def _accepted_numbers(func, names) -> list[tuple[str, int | float]]:
    """The numbers a constructor accepts for a required parameter when every other value raises, in source order:
    an ``if p == 16: ... elif p == 8: ... else: raise NotImplementedError`` chain (jfzhang95-style DeepLab
    ``output_stride``), ``if p not in (2, 3, 4): raise ValueError``, ``assert p in (8, 16)``. A size guessed by name
    (a stride 1, a scale 1.0) meets the raise; a number compared in a chain that does not raise at its end is only a
    branch (``if depth == 18``) and is not read."""
    out: list[tuple[str, int | float]] = []
    for node in ast.walk(func):
        if isinstance(node, ast.Assert):
            out += _numbers_tested(node.test, names)
        elif isinstance(node, ast.If) and _raises(node.body) and not node.orelse:
            out += _numbers_tested(node.test, names, negated=True)
        elif isinstance(node, ast.If):
            tests, last = [node.test], node
            while len(last.orelse) == 1 and isinstance(last.orelse[0], ast.If):
                last = last.orelse[0]
                tests.append(last.test)
            if last.orelse and _raises(last.orelse):
                out += [pair for t in tests for pair in _numbers_tested(t, names)]
    return out


def _residue(node, names) -> tuple[str, int] | None:
    """A count the function requires in a residue class, ``(depth - 4) % 6 == 0`` (WideResNet: depth 6n + 4),
    ``depth % 3 == 0``, ``(depth - 2) % 9 != 0`` (raising): (name, the smallest such value above the offset) -> 10,
    3, 11; None for any other node. Sizes guessed by name (16, 8, 32) fail such an assert."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq))
            and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Mod)):
        return None
    right, modulus, value = node.comparators[0], node.left.right, node.left.left
    if not (_int_const(right) == 0 and (_int_const(modulus) or 0) > 1):
        return None
    offset = 0
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Sub, ast.Add)) and _int_const(value.right) is not None:
        offset = _int_const(value.right) * (1 if isinstance(value.op, ast.Sub) else -1)
        value = value.left
    if not (isinstance(value, ast.Name) and value.id in names):
        return None
    n = _int_const(modulus)
    return value.id, offset + n if offset + n > 0 else n


_SEQUENCE_CALLS = {"len", "enumerate", "zip", "list", "tuple", "sum", "max", "min", "sorted", "reversed", "iter"}
# methods only a string has (list's count/index and bytes' aside): a value they are called on is a string
_STR_METHODS = {"lower", "upper", "startswith", "endswith", "split", "strip", "format", "replace", "find", "rfind",
                "rsplit", "lstrip", "rstrip", "splitlines", "partition", "rpartition", "casefold", "capitalize",
                "title", "swapcase", "isdigit", "isalpha", "isalnum", "isnumeric", "isdecimal", "isupper", "islower",
                "isspace", "zfill", "center", "ljust", "rjust", "format_map", "removeprefix", "removesuffix",
                "expandtabs"}
_MAPPING_METHODS = {"get", "items", "keys", "values", "pop", "copy", "update", "setdefault"}
_SEARCHES = {"find", "rfind", "startswith", "endswith"}  # a string's searches: what they look for is in the value


def _usage(cls: ast.ClassDef, params: list[Param], argdefaults: dict[str, str],
           tables: dict[str, list] | None = None, helpers: dict | None = None) -> None:
    """How the class uses each required constructor parameter, read from every method: ``args.hidden_size`` (through
    ``self.args = args`` too) makes it a namespace with those attributes (their literal argparse default in the
    repository when it has one), ``**cfg`` / ``cfg["k"]`` / ``cfg.get("k")`` a mapping, ``for b in blocks`` /
    ``len(dims)`` / ``dims[0]`` a sequence, ``fn(x)`` a callable, ``mode.lower()`` a string. A parameter used only
    as a number keeps ``use == ""``."""
    # required ones, and those whose default is None (``configs=None`` then ``configs.wavelet``): a value of their
    # use is tried when the defaults fail (build.ctor_attempts)
    required = {p.name: p for p in params if p.default in (None, "None") and p.kind in ("positional", "keyword")}
    if not required:
        return
    init = _method(cls, "__init__")
    alias: dict[str, str] = {}  # "self.cfg" -> "cfg"
    if init is not None:
        for node in ast.walk(init):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in required:
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        alias[f"self.{t.attr}"] = node.value.id
        # an attribute bound to the parameter and then to something else (``self.dropout = dropout``, then
        # ``self.dropout = nn.Dropout(dropout)``): what the other methods read is the last binding, not the parameter
        # (graviraja/seq2seq's Encoder: ``self.dropout(embedded)`` made the rate a callable, a Passthrough, and
        # nn.Dropout refused it: "'<' not supported between instances of 'Passthrough' and 'int'")
        last: dict[str, ast.expr] = {}
        for node in sorted((n for n in ast.walk(init) if isinstance(n, ast.Assign)), key=lambda n: n.lineno):
            for t in node.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    last[f"self.{t.attr}"] = node.value
        for key in [k for k, v in alias.items() if not (isinstance(last.get(k), ast.Name) and last[k].id == v)]:
            del alias[key]

    # a parameter's name by itself counts in __init__ (not a forward's local), and in a method of the class that
    # __init__ hands it to (``self._check_branches(num_branches, blocks, num_blocks)``: HRNet reads len(num_blocks)
    # there), under the method's own parameter name
    # (and on from that method: HRNet's _make_branches(..., blocks, ...) hands ``block`` to _make_one_branch)
    # and in a function of the module it hands it to (PointNet++'s ``self.mlp = build_shared_mlp(mlp, bn=bn)``, which
    # reads ``len(mlp_spec)`` and ``mlp_spec[i]``: a list, where 16 met "object of type 'int' has no len()")
    local: dict[int, dict[str, str]] = {}
    todo = [(init, {n: n for n in required})] if init is not None else []
    done: set[int] = set()
    reached: list = []  # the module's functions reached
    while todo:
        func, names = todo.pop()
        if id(func) in done:
            continue
        done.add(id(func))
        for n in ast.walk(func):
            local.setdefault(id(n), names)
        for n in ast.walk(func):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in (helpers or {}) \
                    and id(helpers[n.func.id]) not in done:
                helper = helpers[n.func.id]
                hparams = [a.arg for a in [*helper.args.posonlyargs, *helper.args.args]]
                handed = {hparams[i]: names[a.id] for i, a in enumerate(n.args) if i < len(hparams)
                          and isinstance(a, ast.Name) and a.id in names}
                handed.update({k.arg: names[k.value.id] for k in n.keywords if k.arg in hparams
                               and isinstance(k.value, ast.Name) and k.value.id in names})
                if handed:
                    reached.append(helper)
                    todo.append((helper, handed))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                    and n.func.value.id == "self" and n.func.attr != "__init__":
                method = _method(cls, n.func.attr)
                if method is None or id(method) in done:
                    continue
                mparams = [a.arg for a in [*method.args.posonlyargs, *method.args.args][1:]]
                handed = {mparams[i]: names[a.id] for i, a in enumerate(n.args) if i < len(mparams)
                          and isinstance(a, ast.Name) and a.id in names}
                handed.update({k.arg: names[k.value.id] for k in n.keywords if k.arg in mparams
                               and isinstance(k.value, ast.Name) and k.value.id in names})
                if handed:
                    todo.append((method, handed))

    def which(node) -> str | None:
        if isinstance(node, ast.Name):
            return local.get(id(node), {}).get(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return alias.get(f"self.{node.attr}")
        return None

    uses: dict[str, set] = {n: set() for n in required}
    attrs: dict[str, dict] = {n: {} for n in required}
    table_keys = {id(n.slice): n.value.id for n in ast.walk(cls) if isinstance(n, ast.Subscript)
                  and isinstance(n.value, ast.Name) and n.value.id in (tables or {})}
    lengths: dict[str, int] = {}
    counts: set[str] = set()  # used as a count or a size (Param.count)
    derived = _derived_locals(cls, which)  # out_feats = scale * scale * args.n_colors -> {scale}

    def at_least(name: str, n: int) -> None:
        if 1 <= n <= 8:
            lengths[name] = max(lengths.get(name, 0), n)

    for node in [*ast.walk(cls), *(n for helper in reached for n in ast.walk(helper))]:
        if isinstance(node, (ast.If, ast.IfExp, ast.While)) and which(node.test) is not None:
            uses[which(node.test)].add("flag")  # if learn_top:
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and which(node.operand) is not None:
            uses[which(node.operand)].add("flag")
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Tuple, ast.List)) \
                and which(node.value) is not None and not any(isinstance(e, ast.Starred) for e in node.targets[0].elts):
            uses[which(node.value)].add("sequence")  # H, W, C = image_shape
            at_least(which(node.value), len(node.targets[0].elts))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq) \
                and isinstance(node.left, ast.Call) and _last(node.left.func) == "len" and node.left.args \
                and which(node.left.args[0]) is not None and isinstance(node.comparators[0], ast.Constant) \
                and type(node.comparators[0].value) is int:
            at_least(which(node.left.args[0]), node.comparators[0].value)  # assert len(obs_shape) == 3
        keyed = _keyed_loop(node, which)
        if keyed is not None:  # for head in sorted(self.heads): ... self.heads[head]: names -> sizes
            uses[keyed].add("mapping")
            for key in ("a", "b"):
                attrs[keyed].setdefault(key, COUNT_KEY)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            related = _length_relation(node, which)
            if related is not None and not required[related[0]].len_rel:
                this, other, k = related
                required[this].len_rel = [other, k]
                uses[this].add("sequence")
                uses[other].add("sequence")
            for count, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
                if which(count) is not None and isinstance(other, ast.Call) and _last(other.func) == "len" \
                        and other.args and which(other.args[0]) not in (None, which(count)):
                    uses[which(count)].add("number")  # if num_branches != len(num_blocks)
                    uses[which(other.args[0])].add("sequence")
                    required[which(count)].len_of = which(other.args[0])
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
                and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str) \
                and which(node.comparators[0]) is not None:
            attrs[which(node.comparators[0])][IN_KEY] = None  # if 'dropout' not in self.args: argparse's Namespace
        elif isinstance(node, ast.Subscript) and which(node.value) is not None:
            index = _int_const(node.slice)
            bound = (index + 1 if index >= 0 else -index) if index is not None else 0
            if bound > 2:  # layers[3], img_size[2] (a lower bound: two items, the default, serve kernel_size[0])
                at_least(which(node.value), bound)
        if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)) or (
                isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, str)):
            path, base = [], node  # args.model.dim -> [("model", "."), ("dim", ".")]; cfg["a"]["b"] -> [..., "[]"]
            while which(base) is None and (isinstance(base, ast.Attribute) or (
                    isinstance(base, ast.Subscript) and isinstance(base.slice, ast.Constant)
                    and isinstance(base.slice.value, str))):
                path.insert(0, (base.attr, ".") if isinstance(base, ast.Attribute) else (base.slice.value, "[]"))
                base = base.value
            name = which(base)
            if name is None or not path:
                continue
            if len(path) == 1 and path[0][1] == "." and path[0][0] in _STR_METHODS:
                uses[name].add("str")
            elif len(path) == 1 and path[0][1] == "." and path[0][0] in _MAPPING_METHODS:
                uses[name].add("mapping")
            elif len(path) > 1 and path[-1][1] == "." and path[-1][0] in _MAPPING_METHODS \
                    and not any(a.startswith("_") for a, _ in path):
                # a method of a mapping inside (ViT-pytorch's ``config.patches.get("grid")``): no key of it; the
                # mapping it is called on is read with .get (its keys the Call branch below records)
                uses[name].add("namespace" if path[0][1] == "." else "mapping")
                level = attrs[name]
                for a, _ in path[:-1]:
                    if not isinstance(level.get(a), dict):
                        level[a] = {}
                    level = level[a]
                if path[-1][0] == "get":
                    level.setdefault(GET_KEY, None)
            elif len(path) > 1 and path[-1][1] == "." and path[-1][0] in _STR_METHODS \
                    and not any(a.startswith("_") for a, _ in path):
                # a string's method called on an attribute (EDSR's ``args.loss.split('+')``, ``args.model.lower()``):
                # the attribute is a string, the repository's argparse default for it when there is one (never a
                # namespace with that method: ``SimpleNamespace(split=16)`` met "'int' object is not callable")
                uses[name].add("namespace" if path[0][1] == "." else "mapping")
                level = attrs[name]
                for (a, _), (_, inner) in zip(path[:-2], path[1:-1]):
                    if not isinstance(level.get(a), dict):
                        level[a] = {"[]": True} if inner == "[]" else {}
                    level = level[a]
                level[path[-2][0]] = argdefaults.get(path[-2][0]) or STR_KEY
            elif not any(a.startswith("_") for a, _ in path):
                uses[name].add("namespace" if path[0][1] == "." else "mapping")
                level = attrs[name]
                for (a, _), (_, inner) in zip(path[:-1], path[1:]):  # a namespace (or a mapping) inside
                    if not isinstance(level.get(a), dict):
                        level[a] = {"[]": True} if inner == "[]" else {}
                    level = level[a]
                if not isinstance(level.get(path[-1][0]), dict) and level.get(path[-1][0]) != STR_KEY:
                    level[path[-1][0]] = argdefaults.get(path[-1][0])
                    if level[path[-1][0]] is None and id(node) in table_keys:
                        # a key of one of the module's tables (``ACT2FN[config.act_fn]``): its first key
                        level[path[-1][0]] = repr(tables[table_keys[id(node)]][0])
        elif isinstance(node, ast.Call):
            name = which(node.func)
            if name is not None:
                uses[name].add("callable")
            if isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args \
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                path, base = [], node.func.value  # config.patches.get("grid"): ["patches"], a level inside
                while which(base) is None and isinstance(base, ast.Attribute):
                    path.insert(0, base.attr)
                    base = base.value
                name = which(base)
                if name is not None and not any(a.startswith("_") for a in path):
                    level = attrs[name]
                    for a in path:
                        if not isinstance(level.get(a), dict):
                            level[a] = {}
                        level = level[a]
                    level.setdefault(node.args[0].value, None)
                    # read with .get too: a namespace of it is also a dict; the keys read so are optional (a
                    # configuration lacking one still serves: ``if config.patches.get("grid") is not None:``)
                    level[GET_KEY] = sorted({*(level.get(GET_KEY) or ()), node.args[0].value})
            if _last(node.func) in _SEQUENCE_CALLS and node.args and which(node.args[0]) is not None:
                uses[which(node.args[0])].add("sequence")
            if _last(node.func) in ("range", "int", "float"):  # range(n); int(nb_layers) (WideResNet's NetworkBlock)
                for a in node.args:
                    if which(a) is not None:
                        uses[which(a)].add("number")
            if _last(node.func) in _SIZE_METHODS or _last(node.func) == "range":  # x.repeat(1, self.s), view(h * s)
                for a in node.args:
                    for part in ast.walk(a):
                        if isinstance(part, (ast.Name, ast.Attribute)) and which(part) is not None:
                            counts.add(which(part))
            for a in _layer_size_arguments(node):  # nn.PixelShuffle(scale), nn.Conv2d(c, scale * scale * 3, 3)
                for part in _size_parts(a):
                    if isinstance(part, (ast.Name, ast.Attribute)) and which(part) is not None:
                        counts.add(which(part))
                    elif isinstance(part, ast.Name) and part.id in derived.get(id(part), {}):
                        counts.update(derived[id(part)][part.id])
            callee = _last(node.func)
            if _torch_spelled(node.func):  # nn.Linear(base_outdim, 256): torch's layer, never a project class of
                callee = "torch:" + callee  # that name in another file (``_hand_target``)
            if callee == "__init__" and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call) \
                    and _last(node.func.value.func) == "super" and cls.bases:  # super().__init__(cfg): the base's
                callee = _last(cls.bases[0])
            for k in node.keywords:
                if k.arg is not None and isinstance(k.value, ast.Subscript) and which(k.value.value) is not None \
                        and not isinstance(k.value.slice, ast.Slice):  # Cell(kernel_size=self.kernel_size[i])
                    required[which(k.value.value)].item_passes.append((callee, k.arg))
                if k.arg is None and which(k.value) is not None:
                    uses[which(k.value)].add("mapping")
                elif k.arg is not None and which(k.value) is not None:  # handed on: Block(dim=dim)
                    required[which(k.value)].passes.append((callee, k.arg))
                    if re.match(r"(num|n)_|num[a-z]", k.arg):  # nn.LSTM(num_layers=rnn_layers)
                        uses[which(k.value)].add("number")
                    elif callee.startswith("torch:") and k.arg in _TORCH_SWITCHES:
                        # nn.Parameter(embeddings, requires_grad=fine_tune): a switch of torch's, a bool (16 met
                        # "_make_subclass(): argument 'require_grad' (position 3) must be bool, not int")
                        uses[which(k.value)].add("flag")
            for i, a in enumerate(node.args):
                if isinstance(a, ast.Subscript) and which(a.value) is not None and not isinstance(a.slice, ast.Slice):
                    required[which(a.value)].item_passes.append((callee, i))
                if isinstance(a, ast.Starred) and which(a.value) is not None:
                    uses[which(a.value)].add("sequence")
                    if any(not isinstance(b, ast.Starred) for b in node.args):
                        # unpacked beside further positional arguments (``nn.Linear(*input_dims, hidden)``: an
                        # environment's observation shape, a 1-tuple): one extent at least, not the [8, 16] a
                        # plural size gets (MythraV/rl_lib's DDPG critic: Linear(8, 16, bias=8))
                        at_least(which(a.value), 1)
                elif which(a) is not None:  # handed on: Transformer(cfg)
                    required[which(a)].passes.append((callee, i))
        elif isinstance(node, ast.Starred) and which(node.value) is not None:
            # unpacked anywhere: ``torch.reshape(x, shape=(-1, *self.shape))`` (tneuer/GAN-pytorch's LayerReshape)
            uses[which(node.value)].add("sequence")
        elif isinstance(node, (ast.For, ast.comprehension)) and which(node.iter) is not None:
            uses[which(node.iter)].add("sequence")
        elif isinstance(node, ast.Subscript) and which(node.value) is not None and _computed_text(node.slice):
            uses[which(node.value)].add("mapping")  # data_config[self.mode + '_size']: a key it computes
            attrs[which(node.value)][ANY_KEY] = None
        elif isinstance(node, ast.Subscript) and which(node.value) is not None:
            uses[which(node.value)].add("sequence")
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)) \
                and which(node.comparators[0]) is not None:
            # ``if ds in attention_resolutions`` (OpenAI's ADM U-Net, xyfJASON/diffusion-models-pytorch: an int there,
            # "argument of type 'int' is not iterable")
            uses[which(node.comparators[0])].add("sequence")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)):
            for side in (node.left, node.right):  # layers - 1 (not [0] * n or a + b: lists add and repeat)
                if which(side) is not None:
                    uses[which(side)].add("number")
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(
                node.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) and which(node.left) is not None \
                and isinstance(node.comparators[0], ast.Constant) and type(node.comparators[0].value) in (int, float):
            uses[which(node.left)].add("number")  # if char_rnn_layers <= 1
    _sequence_keys(cls, which, attrs)
    _tensor_uses(cls, which, uses, attrs)
    _compared_strings(cls, which, attrs)
    items = _unpacked_items([init, *reached] if init is not None else reached, which)
    for name, p in required.items():
        if name in items and "sequence" in items[name]:
            p.items = items[name]
        found = uses[name]
        for kind in ("tensor", "callable", "namespace", "mapping", "sequence", "str", "number", "flag"):
            if kind in found:
                p.use = kind
                break
        if p.use in ("namespace", "mapping", "tensor") or (p.use == "callable" and "namespace" in found):
            p.attrs = attrs[name]  # a callable whose attributes are read too may be a block class (_block_classes)
        if p.use == "sequence" and name in lengths:
            p.length = lengths[name]
        p.count = name in counts and p.use in ("", "number")


def _unpacked_items(funcs: list, which) -> dict[str, list]:
    """Parameters unpacked into names in ``funcs`` (``a, b, c = conv_dim``): per position, "sequence" when the
    function reads that name as one (indexes or slices it, iterates it, measures it, unpacks it with ``*``), else
    "" (MolGAN's Discriminator: ``graph_conv_dim, aux_dim, linear_dim = conv_dim``, then ``graph_conv_dim[-1]`` and
    ``linear_dim[:-1]``: [[8, 16], 16, [8, 16]], where [8, 16, 16] met "'int' object is not subscriptable")."""
    out: dict[str, list] = {}
    for func in funcs:
        for node in ast.walk(func):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], (ast.Tuple, ast.List)) and which(node.value) is not None
                    and all(isinstance(e, ast.Name) for e in node.targets[0].elts)):
                continue
            names = [e.id for e in node.targets[0].elts]
            seq: set[str] = set()
            for n in ast.walk(func):
                if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name):
                    seq.add(n.value.id)
                elif isinstance(n, (ast.For, ast.comprehension)) and isinstance(n.iter, ast.Name):
                    seq.add(n.iter.id)
                elif isinstance(n, ast.Starred) and isinstance(n.value, ast.Name):
                    seq.add(n.value.id)
                elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" and n.args \
                        and isinstance(n.args[0], ast.Name):
                    seq.add(n.args[0].id)
            out.setdefault(which(node.value), ["sequence" if name in seq else "" for name in names])
    return out


def _computed_text(node) -> bool:
    """A string the code computes: an f-string, ``a + '_size'``, ``'{}_dim'.format(x)``, ``str(x)``."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return any(isinstance(side, ast.Constant) and isinstance(side.value, str) or _computed_text(side)
                   for side in (node.left, node.right))
    if isinstance(node, ast.Call):
        func = node.func
        return (isinstance(func, ast.Name) and func.id == "str") or (
            isinstance(func, ast.Attribute) and func.attr in ("format", "join", "lower", "upper")
            and isinstance(func.value, (ast.Constant, ast.JoinedStr)))
    return False


def _length_relation(node: ast.Compare, which) -> tuple[str, str, int] | None:
    """``len(a) == len(b) + k`` (or ``len(a) - k``, either side, ``!=`` in a raise): (a, b, k), two parameters."""
    def term(expr) -> tuple[str, int] | None:
        k = 0
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)) \
                and isinstance(expr.right, ast.Constant) and type(expr.right.value) is int:
            k, expr = (expr.right.value if isinstance(expr.op, ast.Add) else -expr.right.value), expr.left
        if isinstance(expr, ast.Call) and _last(expr.func) == "len" and len(expr.args) == 1 \
                and which(expr.args[0]) is not None:
            return which(expr.args[0]), k
        return None

    left, right = term(node.left), term(node.comparators[0])
    if left is None or right is None or left[0] == right[0] or abs(right[1] - left[1]) > 4:
        return None
    return left[0], right[0], right[1] - left[1]  # len(a) + ka == len(b) + kb: len(a) == len(b) + (kb - ka)


def _compared_strings(cls: ast.ClassDef, which, attrs: dict[str, dict]) -> None:
    """An attribute (or key) of a namespace parameter that the class compares with strings and that has no literal
    default takes the first string it is compared with for equality, in source order (clovaai/deep-text-recognition-
    benchmark's ``if opt.FeatureExtraction == 'VGG': ... else: raise Exception('No FeatureExtraction module
    specified')``; its argparse option is required, so it has no default): the class's own first branch. In place."""
    found: dict[tuple, tuple] = {}
    for node in ast.walk(cls):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq)
                and isinstance(node.comparators[0], ast.Constant) and isinstance(node.comparators[0].value, str)):
            continue
        base, path = node.left, []
        while isinstance(base, ast.Attribute) or (isinstance(base, ast.Subscript) and isinstance(base.slice, ast.Constant)
                                                   and isinstance(base.slice.value, str)):
            if which(base) is not None:
                break
            path.insert(0, base.attr if isinstance(base, ast.Attribute) else base.slice.value)
            base = base.value
        name = which(base)
        if name is None or not path or name not in attrs:
            continue
        where = (node.lineno, node.col_offset)
        key = (name, tuple(path))
        if key not in found or where < found[key][0]:
            found[key] = (where, node.comparators[0].value)
    for (name, path), (_, text) in found.items():
        level = attrs[name]
        for part in path[:-1]:
            level = level.get(part)
            if not isinstance(level, dict):
                break
        else:
            if path[-1] in level and level[path[-1]] is None:
                level[path[-1]] = repr(text)


# calls whose first argument is a tensor (a constructor argument handed to them is a tensor: pretrained embeddings)
_TENSOR_CALLS = {"Parameter", "from_pretrained", "copy_", "from_numpy"}  # not torch.tensor(x): x may be a list
# what makes a tensor of an array or a nested list, read through where a layer's weight is made of it
_WEIGHT_MAKERS = {"tensor", "as_tensor", "from_numpy", "asarray"}
# torch 1.x type constructors: data only inside from_pretrained with one argument; nn.Parameter(torch.FloatTensor(
# in_features, out_features)) / Parameter(torch.Tensor(out_features)) hand them sizes (graph-cnn.pytorch's
# GraphConvolution, the common idiom of that time)
_LEGACY_MAKERS = {"FloatTensor", "Tensor", "DoubleTensor"}
_TENSOR_METHODS = {"detach", "clone", "numpy", "cpu", "cuda", "float", "t", "dim", "numel", "requires_grad_"}
_TABLE_LAYERS = {"Embedding", "EmbeddingBag", "Linear"}


_LIST_TYPES = {"list", "List"}
_TUPLE_TYPES = {"tuple", "Tuple"}


def _isinstance_of(node) -> tuple[str, set] | None:
    """``isinstance(NAME, T)`` / ``isinstance(NAME, (T1, T2))``: (NAME, {T...}); None otherwise."""
    if isinstance(node, ast.Call) and _last(node.func) == "isinstance" and len(node.args) == 2 \
            and isinstance(node.args[0], ast.Name):
        types = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        return node.args[0].id, {_last(t) for t in types}
    return None


def _layer_checks(cls: ast.ClassDef, params: list[Param]) -> None:
    """What a stack's constructor accepts for a per-layer argument, read from its own checks, in ``__init__`` and in
    the methods ``__init__`` hands the argument to (``self._check_kernel_size_consistency(kernel_size)``,
    ``self._extend_for_multilayer(hidden_dim, num_layers)``; each call maps the method's parameter to the argument,
    so one helper checked for several arguments counts for each): ``isinstance(k, tuple)`` -> ``accepts`` "tuple";
    ``if not isinstance(k, list): k = [k] * n`` -> "one" (a single value, repeated per layer);
    ``all(isinstance(e, tuple) for e in k)`` -> ``item`` 2 (a list of pairs). ConvLSTM/ConvGRU stacks refuse the
    guessed ``[8, 16]`` for ``kernel_size`` ("`kernel_size` must be tuple or list of tuples")."""
    required = {p.name: p for p in params if p.kind in ("positional", "keyword")}
    init = _method(cls, "__init__")
    if init is None or not required:
        return

    def checks(func) -> dict[str, dict]:
        """Per parameter name of ``func``: {"tuple": bool, "one": bool, "item": bool}."""
        out: dict[str, dict] = {}
        for node in ast.walk(func):
            test = _isinstance_of(node)
            if test and test[1] & _TUPLE_TYPES:
                out.setdefault(test[0], {})["tuple"] = True
            if isinstance(node, (ast.GeneratorExp, ast.ListComp)) and len(node.generators) == 1 \
                    and isinstance(node.generators[0].iter, ast.Name) and isinstance(node.generators[0].target,
                                                                                     ast.Name):
                inner = _isinstance_of(node.elt)
                if inner and inner[0] == node.generators[0].target.id and inner[1] & _TUPLE_TYPES:
                    out.setdefault(node.generators[0].iter.id, {})["item"] = True
            if isinstance(node, ast.If) and isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not):
                test = _isinstance_of(node.test.operand)
                if test and test[1] & _LIST_TYPES and any(
                        isinstance(a, ast.Assign) and any(isinstance(t, ast.Name) and t.id == test[0]
                                                          for t in a.targets)
                        and isinstance(a.value, ast.BinOp) and isinstance(a.value.op, ast.Mult)
                        and (isinstance(a.value.left, ast.List) or isinstance(a.value.right, ast.List))
                        for b in node.body for a in ast.walk(b)):
                    out.setdefault(test[0], {})["one"] = True
        return out

    found: dict[str, dict] = {}
    for name, flags in checks(init).items():
        if name in required:
            found.setdefault(name, {}).update(flags)
    for call in ast.walk(init):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name) and call.func.value.id in ("self", cls.name)):
            continue
        method = _method(cls, call.func.attr)
        if method is None or method is init:
            continue
        static = any(_last(d) == "staticmethod" for d in method.decorator_list)
        names = [a.arg for a in [*method.args.posonlyargs, *method.args.args]][0 if static else 1:]
        flags = checks(method)
        handed = {names[i]: a.id for i, a in enumerate(call.args) if i < len(names) and isinstance(a, ast.Name)}
        handed.update({k.arg: k.value.id for k in call.keywords if k.arg in names and isinstance(k.value, ast.Name)})
        for inner, outer in handed.items():
            if inner in flags and outer in required:
                found.setdefault(outer, {}).update(flags[inner])
    for name, flags in found.items():
        p = required[name]
        p.accepts = "tuple" if flags.get("tuple") else "one" if flags.get("one") else p.accepts
        if flags.get("item"):
            p.item = 2


def _torch_spelled(func: ast.expr) -> bool:
    """A call spelled through torch's modules (``nn.Linear``, ``torch.nn.Conv2d``, ``torch.cat``)."""
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and func.id in ("nn", "torch")


def _classes_by_name(found: dict) -> dict[str, list]:
    by_name: dict[str, list] = {}
    for c in found.values():
        if c.kind == "class":
            by_name.setdefault(c.name, []).append(c)
    return by_name


def _hand_target(c, callee: str, by_name: dict):
    """The project class a hand-on of ``c`` reaches: none for a call spelled through torch (``nn.Linear``: TabSurvey's
    DANet hands ``num_classes`` to torch's Linear, not to deepfm_lib's ``class Linear``, which reads its second
    argument as a list: DANet was built with ``num_classes=[8, 16]``), the class ``c``'s file imports under that name
    (``_named_class``), a class of that name in ``c``'s own file first, else the first of that name."""
    if callee.startswith("torch:"):
        return None
    imported = _named_class(c, callee, by_name)
    if imported is not None:
        return imported
    options = by_name.get(callee, [])
    return next((o for o in options if o.rel == c.rel), options[0] if options else None)


def _named_class(c, name: str, by_name: dict):
    """The project class ``c``'s file imports as ``name`` under another name of its own (``from .decoder import
    Decoder as BasicDecoder`` then ``class Decoder(BasicDecoder)`` and ``super(Decoder, self).__init__(embeddings=
    embeddings)``: Image-Captioning's three decoders, whose base reads the pretrained table; by the alias no class
    was found, by the real name the subclass itself or a sibling of that name); None when not so imported."""
    if name not in c.imported:
        return None
    rel, real = c.imported[name]
    return next((o for o in by_name.get(real, []) if o.rel == rel and o.kind == "class"), None)


def _hand_on_items(found: dict) -> None:
    """A per-layer argument whose items go to another class of the project (``ConvGRUCell(kernel_size=
    self.kernel_size[i])``) that reads each as a sequence (``kernel_size[0] // 2, kernel_size[1] // 2``): its items
    are tuples of that length (``item``; 2 when the length is not read)."""
    by_name = _classes_by_name(found)
    for c in found.values():
        for p in c.params:
            if p.item or not p.item_passes:
                continue
            for callee, where in p.item_passes:
                target = _hand_target(c, callee, by_name)
                if target is None or target is c:
                    continue
                q = _param_at(target, where)
                if q is not None and q.use == "sequence":
                    p.item = q.length if q.length >= 2 else 2
                    break


def _tensor_uses(cls: ast.ClassDef, which, uses: dict[str, set], attrs: dict[str, dict]) -> None:
    """A constructor parameter the class hands to ``nn.Parameter`` / ``Embedding.from_pretrained`` / ``copy_`` /
    ``torch.from_numpy`` / ``register_buffer``, or whose tensor methods it calls (``weights.detach()``), is a tensor (``use``
    "tensor"): pretrained embeddings (``self.emb = nn.Embedding(vocab_size, dim)`` then
    ``self.emb.weight = nn.Parameter(weights)``). When it replaces the weight of a layer the class builds from its
    own sizes (an Embedding or Linear), ``attrs["shape"]`` holds that layer's two size arguments (parameter names or
    numbers: the layer's table shape; Linear's is out x in)."""
    layers: dict[str, list] = {}  # self.emb -> [size argument nodes] of nn.Embedding(vocab_size, dim)
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and _last(node.value.func) in _TABLE_LAYERS and len(node.value.args) >= 2:
            for t in node.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    args = node.value.args[:2]
                    layers[t.attr] = args[::-1] if _last(node.value.func) == "Linear" else args

    def size(node):
        if isinstance(node, ast.Name):
            return node.id
        value = _int_const(node)
        return value

    for node in ast.walk(cls):
        name = None
        if isinstance(node, ast.Call) and (_last(node.func) in _TENSOR_CALLS and node.args
                                           or _last(node.func) == "register_buffer" and len(node.args) >= 2):
            # self.register_buffer("mask", mask): its second argument (pytorch-flows' MaskedLinear, diffuser's
            # WeightedLoss: "cannot assign 'int' object to buffer")
            arg = node.args[1] if _last(node.func) == "register_buffer" else node.args[0]
            if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr in _TENSOR_METHODS:
                arg = arg.func.value  # nn.Parameter(weights.clone())
            if _last(node.func) in ("from_pretrained", "Parameter") and isinstance(arg, ast.Call) and arg.args \
                    and (_last(arg.func) in _WEIGHT_MAKERS or _last(arg.func) in _LEGACY_MAKERS
                         and _last(node.func) == "from_pretrained" and len(arg.args) == 1):
                # nn.Embedding.from_pretrained(torch.tensor(embedding_matrix, dtype=torch.float)) (ABSA-PyTorch's
                # models): what a layer's weight is made of is a table, whatever makes it a tensor. Not the sizes
                # torch's typed constructors take (``nn.Parameter(torch.FloatTensor(input_dim, output_dim))``,
                # JiaxuanYou/graph-generation's GraphConv: input_dim guessed a 16 x 16 table, "new() received an
                # invalid combination of arguments")
                arg = arg.args[0]
            name = which(arg)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _TENSOR_METHODS \
                and not node.args and which(node.func.value) is not None:
            name = which(node.func.value)
        if name is None:
            continue
        uses[name].add("tensor")
        # the layer whose weight it replaces: self.emb.weight = nn.Parameter(weights) / self.emb.weight.data.copy_(w)
        # / nn.Embedding.from_pretrained(weights) (any shape: none recorded)
        for parent in ast.walk(cls):
            targets = []
            if isinstance(parent, ast.Assign) and any(n is node for n in ast.walk(parent.value)):
                targets = parent.targets
            elif isinstance(parent, ast.Call) and parent is node and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "copy_":
                targets = [node.func.value]
            for t in targets:
                chain = []
                while isinstance(t, ast.Attribute):
                    chain.insert(0, t.attr)
                    t = t.value
                if isinstance(t, ast.Name) and t.id == "self" and len(chain) >= 2 and chain[1] == "weight" \
                        and chain[0] in layers:
                    shape = [size(a) for a in layers[chain[0]]]
                    if all(v is not None for v in shape):
                        attrs[name]["shape"] = shape


SEQUENCE_KEY = "<sequence>"  # a mapping key's (or namespace attribute's) value that the class reads as a sequence
FLAG_KEY = "<flag>"  # ... that the class only tests for truth (``if args.cuda:``)
GET_KEY = "<get>"  # a key of ``attrs``: the class reads the parameter with ``.get`` (BigVGAN's ``h.get("x")`` beside
# ``h.snake_logscale``: an AttrDict), never a key the class reads; its value lists the keys read with ``.get`` (a
# configuration may lack them: build._covers)
IN_KEY = "<in>"  # a key of ``attrs``: the class tests a name's presence with ``in`` (princeton-vl/RAFT's ``if 'dropout'
# not in self.args``: argparse's Namespace has ``__contains__``, SimpleNamespace does not), never a key the class reads
NONE_KEY = "<none>"  # ... that the class tests against None (``if config.embedding_pretrained is not None:``)
ANY_KEY = "<any>"  # a key of ``attrs``: the class reads the mapping at a key it computes (``data_config[self.mode +
# '_size']``), never a key the class reads: every key reads a small size
STR_KEY = "<str>"  # ... on which the class calls a string's method (``args.loss.split('+')``) and which has no
# literal argparse default in the repository: a string
COUNT_KEY = "<count>"  # ... that the class hands on as a count (``nn.LSTM(..., num_layers=hp.embedder.lstm_layers)``,
# ``range(cfg.n_blocks)``): a number, whatever its name says (``lstm_layers`` is no list of layers)


def _sequence_keys(cls: ast.ClassDef, which, attrs: dict[str, dict]) -> None:
    """Keys of a mapping (attributes of a namespace, at any depth) whose kind the class shows, marked in ``attrs``
    when no literal default is known: ``SEQUENCE_KEY`` for one read as a sequence (``options['fc_lay']`` kept as
    ``self.fc_lay``, then ``len(self.fc_lay)``, ``self.fc_lay[i]``, ``for n in self.fc_lay``: SincNet's MLP options),
    ``FLAG_KEY`` for one tested for truth (``if args.cuda:``, ``not config.model.conditional``: a guessed 16 is
    true), ``NONE_KEY`` for one an ``if`` tests against None (``if config.embedding_pretrained is not None:``:
    None takes the class's own path for its absence), ``COUNT_KEY`` for one handed on as a count (``num_layers=``,
    ``range()``: maum-ai/voicefilter's ``hp.embedder.lstm_layers`` was guessed a list by its name). ``which(node)``
    names the constructor parameter a node is (``_usage``)."""
    def key_of(node):
        path = []
        while True:
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                    and isinstance(node.slice.value, str):
                path.insert(0, node.slice.value)
                node = node.value
            elif isinstance(node, ast.Attribute) and which(node) is None and not (
                    isinstance(node.value, ast.Name) and node.value.id == "self"):
                path.insert(0, node.attr)
                node = node.value
            else:
                break
        if which(node) is not None:
            return (which(node), path) if path else None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                and node.attr in kept:
            name, inner = kept[node.attr]
            return name, inner + path
        return None

    def mark(target, kind: str) -> None:
        if target is None or target[0] not in attrs or not target[1]:
            return
        level = attrs[target[0]]
        for key in target[1][:-1]:
            level = level.get(key)
            if not isinstance(level, dict):
                return
        if target[1][-1] in level and level[target[1][-1]] is None:
            level[target[1][-1]] = kind

    # read by position (``nn.Linear(config.hidden_sizes[-1], n)``): a sequence whose item is the size, not a count
    indexed = {id(n.value) for n in ast.walk(cls) if isinstance(n, ast.Subscript)
               and not (isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str))}
    kept: dict[str, tuple[str, list]] = {}  # self.fc_lay = options['fc_lay'] -> "fc_lay": ("options", ["fc_lay"])
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) \
                and isinstance(node.targets[0].value, ast.Name) and node.targets[0].value.id == "self":
            found = key_of(node.value)
            if found is not None:
                kept[node.targets[0].attr] = found
    for node in ast.walk(cls):
        if isinstance(node, ast.Call):  # a count handed on by keyword (num_layers=..., n_heads=...), or to range()
            for k in node.keywords:
                if k.arg is not None and re.match(r"(num|n)_|num[a-z]", k.arg):
                    mark(key_of(k.value), COUNT_KEY)
            if _last(node.func) == "range":
                for a in node.args:
                    mark(key_of(a), COUNT_KEY)
            # a size: ``x.view(b, c, opt.height, opt.width)``, ``nn.Linear(opt.hidden_size, ...)`` (PPUU's
            # ``opt.width`` was guessed 1.5 by its name, a width multiplier: "view(): ... got float")
            for a in [*(node.args if _last(node.func) in _SIZE_METHODS else []), *_layer_size_arguments(node)]:
                for part in _operands(a):
                    if isinstance(part, ast.Attribute) and id(part) not in indexed:
                        mark(key_of(part), COUNT_KEY)
        if isinstance(node, ast.Subscript) and not (isinstance(node.slice, ast.Constant)
                                                    and isinstance(node.slice.value, str)):
            mark(key_of(node.value), SEQUENCE_KEY)
        elif isinstance(node, ast.Call) and _last(node.func) in _SEQUENCE_CALLS and node.args:
            mark(key_of(node.args[0]), SEQUENCE_KEY)
        elif isinstance(node, (ast.For, ast.comprehension)):
            mark(key_of(node.iter), SEQUENCE_KEY)
        elif isinstance(node, (ast.If, ast.IfExp, ast.While)) and isinstance(node.test, ast.Compare) \
                and len(node.test.ops) == 1 and isinstance(node.test.ops[0], (ast.Is, ast.IsNot)) \
                and isinstance(node.test.comparators[0], ast.Constant) and node.test.comparators[0].value is None:
            mark(key_of(node.test.left), NONE_KEY)  # if config.embedding_pretrained is not None: (its own None path)
        elif isinstance(node, (ast.If, ast.IfExp, ast.While)):
            mark(key_of(node.test), FLAG_KEY)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            mark(key_of(node.operand), FLAG_KEY)
        elif isinstance(node, ast.BoolOp):
            for value in node.values:
                mark(key_of(value), FLAG_KEY)


# torch layers whose leading positional arguments (this many) and these keywords are int sizes: a constructor number
# handed to one is a count (AWSRN's ``AWMS(args, scale, ...)``: ``nn.PixelShuffle(scale)`` and
# ``nn.Conv2d(n_feats, scale * scale * args.n_colors, 3)``; ``scale`` by its name got 1.0: "empty(): argument 'size'
# must be tuple of ints, but found element of type float")
_SIZE_LAYERS = {"PixelShuffle": 1, "PixelUnshuffle": 1, "Linear": 2, "Bilinear": 3, "Embedding": 2,
                "EmbeddingBag": 2, "GroupNorm": 2, "BatchNorm1d": 1, "BatchNorm2d": 1, "BatchNorm3d": 1,
                "InstanceNorm1d": 1, "InstanceNorm2d": 1, "InstanceNorm3d": 1, "Conv1d": 3, "Conv2d": 3, "Conv3d": 3,
                "ConvTranspose1d": 3, "ConvTranspose2d": 3, "ConvTranspose3d": 3, "LSTM": 3, "GRU": 3, "RNN": 3}
_SIZE_KEYWORDS = {"in_channels", "out_channels", "kernel_size", "in_features", "out_features", "in1_features",
                  "in2_features", "num_embeddings", "embedding_dim", "num_features", "num_groups", "num_channels",
                  "upscale_factor", "downscale_factor", "input_size", "hidden_size", "num_layers"}


def _keyed_loop(node, which) -> str | None:
    """The constructor parameter a ``for`` loop walks by key and indexes with that key in its body, or by
    ``.items()``: a mapping of names to sizes (xingyizhou/pytorch-pose-hg-3d's and CenterNet's ``heads``,
    ``{'hm': 16, 'depth': 16}``: ``for head in sorted(self.heads): self.__setattr__(head, nn.Conv2d(256,
    self.heads[head], 1))``). Its plural name made it ``[8, 16]`` ("IndexError: list index out of range"), or ``{}``.
    None for other nodes (a loop over a list's items, a loop that never indexes the parameter with its key)."""
    if not isinstance(node, ast.For):
        return None
    it, items = node.iter, False
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("sorted", "list", "reversed") \
            and it.args:
        it = it.args[0]
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr in ("keys", "items") \
            and not it.args:
        items, it = it.func.attr == "items", it.func.value
    name = which(it)
    if name is None:
        return None
    if items:
        return name if isinstance(node.target, ast.Tuple) and len(node.target.elts) == 2 else None
    if not isinstance(node.target, ast.Name):
        return None
    key = node.target.id
    for stmt in node.body:
        for part in ast.walk(stmt):
            if isinstance(part, ast.Subscript) and which(part.value) == name and isinstance(part.slice, ast.Name) \
                    and part.slice.id == key:
                return name
    return None


def _layer_size_arguments(node) -> list:
    """The arguments of a torch layer's construction that are int sizes (``_SIZE_LAYERS``), [] for other nodes."""
    if not isinstance(node, ast.Call) or _last(node.func) not in _SIZE_LAYERS:
        return []
    return [*node.args[:_SIZE_LAYERS[_last(node.func)]], *(k.value for k in node.keywords if k.arg in _SIZE_KEYWORDS)]


def _operands(expr) -> list:
    """The nodes of a size expression outside any call in it: ``config.maps * len(config.kernels)`` gives
    ``config.maps``, never ``config.kernels`` (a list whose length is the size)."""
    out, todo = [], [expr]
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, ast.Call):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _size_parts(expr) -> list:
    """The nodes of a size expression that make its value: all of it but the keys of its subscripts
    (``configs[net_size]["width"]``: ``net_size`` picks an entry, it is no size; ShuffleNet's ``net_size`` keys of
    0.5/1.0 stay floats)."""
    out, todo = [], [expr]
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, ast.Subscript):
            todo.append(node.value)
        else:
            todo.extend(ast.iter_child_nodes(node))
    return out


def _derived_locals(cls: ast.ClassDef, which) -> dict[int, dict[str, set[str]]]:
    """Per Name node of a method: the method's locals assigned (by a plain ``name = expr``) from an expression of
    constructor parameters, with those parameters (``out_feats = scale * scale * args.n_colors`` -> {"scale",
    "args"}), so a size handed on through a local counts too. One level, keyed by the node's id."""
    out: dict[int, dict[str, set[str]]] = {}
    for func in cls.body:
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        table: dict[str, set[str]] = {}
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                found = {which(part) for part in _size_parts(node.value)
                         if isinstance(part, (ast.Name, ast.Attribute)) and which(part) is not None}
                if found:
                    table.setdefault(node.targets[0].id, set()).update(found)
        if table:
            for node in ast.walk(func):
                if isinstance(node, ast.Name):
                    out[id(node)] = table
    return out


_SIZE_METHODS = {"view", "reshape", "expand", "repeat", "permute", "new_zeros", "new_ones", "new_empty", "tile",
                 "unflatten", "narrow", "chunk", "split", "roll", "zeros", "ones", "empty", "randn", "rand", "arange"}


def _forward_usage(func, params: list[Param], methods: dict | None = None) -> None:
    """How the forward uses each required argument after the first, when that use says it is a Python value rather
    than an array (``Param.use``): "callable" (``sublayer(x)``), "flag" (``if flag:``, ``not flag``), "number" (a size
    given to ``view``/``reshape``/``range``, or compared in an ``if``: ``if t == 0``; the constants it is compared
    with go to ``choices``), "optional" (only ever compared with None: ``if mask is not None``, the argument may be
    None). String choices (``if mode == 'norm'``) are ``_choices``'."""
    names = {p.name: p for p in params[1:] if p.default is None and p.kind == "positional"}
    if not names:
        _first_number(func, params, methods)
        return
    uses: dict[str, set] = {n: set() for n in names}
    tests = [n.test for n in ast.walk(func) if isinstance(n, (ast.If, ast.While, ast.IfExp, ast.Assert))]
    tests += [v for n in ast.walk(func) if isinstance(n, ast.BoolOp) for v in n.values]
    tests += [n.operand for n in ast.walk(func) if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)]
    for test in tests:
        if isinstance(test, ast.Name) and test.id in names:
            uses[test.id].add("flag")
        elif isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id in names \
                and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant):
            value = test.comparators[0].value
            if value is None and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
                uses[test.left.id].add("optional")
            elif type(value) in (int, float) and isinstance(test.ops[0], (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt,
                                                                          ast.GtE)):
                uses[test.left.id].add("number")
                if value not in names[test.left.id].choices:
                    names[test.left.id].choices.append(value)
    for node in ast.walk(func):
        if isinstance(node, ast.Slice):
            # a bound of a slice, alone or in arithmetic (golbin/WaveNet's ResidualBlock.forward(x, skip_size):
            # ``skip[:, :, -skip_size:]``): a Python number; an array there raises "only integer tensors of a single
            # element can be converted to an index"
            for name in _arithmetic_names([node.lower, node.upper, node.step], names):
                uses[name].add("number")
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id in names:
            uses[node.func.id].add("callable")
        if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                and node.func.value.id == "math":
            # Python's math on it, alone or in arithmetic (the RUL Transformer's PositionalEncoder.forward(x, t):
            # ``math.sin(t / (10000 ** (2 * i / d)))``): a Python number; a tensor there raises "only one element
            # tensors can be converted to Python scalars"
            for name in _arithmetic_names(node.args, names):
                uses[name].add("number")
        sized = _last(node.func) in _SIZE_METHODS or _last(node.func) == "range"
        for a in node.args:
            if sized and isinstance(a, ast.Name) and a.id in names:
                uses[a.id].add("number")
            elif sized and isinstance(a, (ast.Tuple, ast.List)):  # x.view((B, H, W, C))
                for e in a.elts:
                    if isinstance(e, ast.Name) and e.id in names:
                        uses[e.id].add("number")
    for name in names:
        if not uses[name] and (_sized_in(func, name) or _handed_sized(func, name, methods)):
            uses[name].add("number")  # an item of a size display, or a size in the class's own method it goes to
    for name, p in names.items():
        p.use = next((k for k in ("callable", "flag", "number", "optional") if k in uses[name]), "")
    _first_number(func, params, methods)


# torch's functions whose first argument is a tensor of ids (indices into a table, or class numbers)
_ID_FUNCTIONS = {"embedding", "embedding_bag", "one_hot"}


def _id_arguments(func, params: list[Param]) -> None:
    """A required forward argument the forward hands as the ids of a functional lookup is an integer tensor
    (``Param.use`` "ids"): ``F.embedding(input_x, X_concat)`` (daiquocnguyen/Graph-Transformer's UGformerV1 looks
    its node ids up in a feature table that is another argument), ``F.one_hot(labels, n)``. Only torch's functional
    spellings (``F.``, ``functional.``, ``nn.functional.``): ``torch.embedding(weight, indices)`` takes its table
    first, and ``self.embedding(x)`` may be any layer. An argument with another use keeps it."""
    names = {p.name: p for p in params if p.default is None and p.kind == "positional" and not p.use}
    for node in ast.walk(func):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in _ID_FUNCTIONS and node.args and isinstance(node.args[0], ast.Name)
                and node.args[0].id in names):
            continue
        owner = node.func.value
        if (isinstance(owner, ast.Name) and owner.id in ("F", "functional")) or \
                (isinstance(owner, ast.Attribute) and owner.attr == "functional"):
            names[node.args[0].id].use = "ids"


def _arithmetic_names(exprs, names) -> list[str]:
    """The ``names`` that ``exprs`` (None skipped) use alone or as terms of arithmetic (``-k``, ``t / (1e4 ** d)``)."""
    found, terms = [], [e for e in exprs if e is not None]
    while terms:
        term = terms.pop()
        if isinstance(term, ast.BinOp):
            terms += [term.left, term.right]
        elif isinstance(term, ast.UnaryOp):
            terms.append(term.operand)
        elif isinstance(term, ast.Name) and term.id in names:
            found.append(term.id)
    return found


def _first_number(func, params: list[Param], methods: dict | None = None) -> None:
    """The first required argument is a number (``Param.use`` "number") when the forward hands it, alone or in
    integer arithmetic, to a size or a range (``torch.arange(j - i, j)``, ``x.view(n, -1)``, ``range(steps)``):
    lucidrains' DynamicPositionBias.forward(i, j) makes its positions from two lengths; or as an item of a size
    display (``torch.zeros([batch_size, 1])``), or hands it to one of the class's own ``methods`` (name ->
    FunctionDef) whose parameter it becomes is used so (lliuz/ARFlow's ``Meshgrid.forward(width, height)`` calls
    ``self._compute_meshgrid(width=width, height=height)``, which makes ``torch.arange(0, width)``). Only that use: a
    first argument compared or tested is still taken for an array."""
    first = next((p for p in params if p.kind == "positional"), None)
    if first is None or first.default is not None or first.use or first.annotation:
        return
    if _sized_in(func, first.name) or _handed_sized(func, first.name, methods):
        first.use = "number"


def _handed_sized(func, name: str, methods: dict | None) -> bool:
    """``func`` hands ``name`` to one of the class's own ``methods`` (``self._update(batch_size)``, by position or
    keyword), whose parameter it becomes is a size there (:func:`_sized_in`). One hop."""
    for node in ast.walk(func):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"
                and node.func.attr in (methods or {})):
            continue
        method = methods[node.func.attr]
        names = [a.arg for a in [*method.args.posonlyargs, *method.args.args]][1:]
        handed = [names[i] for i, a in enumerate(node.args) if i < len(names) and isinstance(a, ast.Name)
                  and a.id == name]
        handed += [k.arg for k in node.keywords if k.arg in names and isinstance(k.value, ast.Name)
                   and k.value.id == name]
        if any(_sized_in(method, n) for n in handed):
            return True
    return False


def _sized_in(func, name: str) -> bool:
    """``func`` hands ``name``, alone, in integer arithmetic or as an item of a display, to a size or a range."""
    creating = {"zeros", "ones", "empty", "randn", "rand", "arange", "range", "new_zeros", "new_ones", "new_empty"}
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and (_last(node.func) in _SIZE_METHODS or _last(node.func) == "range"):
            args = node.args
            if _last(node.func) not in creating and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in ("torch", "F", "np", "numpy"):
                args = args[1:]  # torch.reshape(x, (n, -1)): the first is the tensor reshaped
            for a in args:
                terms = [*a.elts] if isinstance(a, (ast.List, ast.Tuple)) else [a]
                found = False
                while terms:
                    t = terms.pop()
                    if isinstance(t, ast.BinOp) and isinstance(t.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
                        terms += [t.left, t.right]
                    elif isinstance(t, ast.Name) and t.id == name:
                        found = True
                if found and not (isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
                                  and node.func.value.id == name):
                    return True
    return False


def self_calls(func) -> list[tuple[str, list]]:
    """(X, the call's positional arguments) of each call ``self.X(...)``, or ``self.X.forward(...)`` (prlz77/
    ResNeXt.pytorch calls its layers' forward by name: ``x = self.conv_1_3x3.forward(x)``), in ``func``, in source
    order."""
    out = []
    for call in sorted((n for n in ast.walk(func) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset)):
        if not isinstance(call.func, ast.Attribute):
            continue
        target = call.func.value if call.func.attr == "forward" else call.func
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            out.append((target.attr, call.args))
    return out


def _handed_layers(func, params: list[Param]) -> None:
    """The layer each forward argument is first handed to (``Param.layer``): the attribute of the first call
    ``self.X(arg, ...)`` (or ``self.X.forward(arg, ...)``: ``self_calls``) in source order that takes the argument
    itself as its first positional argument. The builder forms the argument for that layer when the model has it, not
    for the layer registered first (pytorch-vqvae's ``GatedMaskedConv2d.forward(x_v, x_h, h)`` registers the class
    embedding that takes ``h`` before the convolutions that take ``x_v`` and ``x_h``)."""
    names = {p.name: p for p in params if p.kind in ("positional", "keyword")}
    for attr, args in self_calls(func):
        if args and isinstance(args[0], ast.Name) and args[0].id in names and not names[args[0].id].layer:
            names[args[0].id].layer = attr


_SEQUENCE_ANNOTATION = r"(typing\.)?(List|list|Tuple|tuple|Sequence|Iterable)\b"


def _mapping_usage(func, params: list[Param]) -> None:
    """A required forward argument the forward reads by string keys (``batch["image"]``, ``inputs.get("mask")``):
    ``Param.use`` "mapping", its keys in ``attrs`` in the order first read. The builder tries a dict input for it."""
    names = {p.name: p for p in params if p.default is None and p.kind == "positional" and not p.use}
    keys: dict[str, dict] = {}
    for node in sorted(ast.walk(func), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in names \
                and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str):
            keys.setdefault(node.value.id, {}).setdefault(node.slice.value, None)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in names and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            keys.setdefault(node.func.value.id, {}).setdefault(node.args[0].value, None)
    for name, found in keys.items():
        if all(re.fullmatch(r"[\w.\-]+", k) for k in found):
            names[name].use, names[name].attrs = "mapping", found


# what a tensor answers as an attribute (not called): an argument read only so is a tensor
_TENSOR_ATTRIBUTES = {"shape", "dtype", "device", "data", "grad", "ndim", "T", "mT", "H", "mH", "real", "imag",
                      "is_cuda", "requires_grad", "layout", "names", "is_sparse", "grad_fn", "itemsize", "nbytes"}


def _object_usage(func, params: list[Param]) -> None:
    """A required forward argument the forward reads by attribute beyond a tensor's own (``data.x``,
    ``data.edge_index``: a PyG batch; ``pb.payload``, ``pb.seq_len_mask``: ptls' PaddedBatch): ``Param.use``
    "object", its attributes in ``attrs`` in the order first read (a method called on it, ``x.view(...)``, is a
    tensor's use). The builder tries an object holding a tensor per attribute."""
    names = {p.name: p for p in params if p.default is None and p.kind == "positional" and not p.use}
    if not names:
        return
    called = {id(n.func) for n in ast.walk(func) if isinstance(n, ast.Call)}
    found: dict[str, dict] = {}
    tensor_use: set[str] = set()
    for node in sorted(ast.walk(func), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names \
                and isinstance(node.ctx, ast.Load):
            if id(node) in called:
                tensor_use.add(node.value.id)
            elif node.attr not in _TENSOR_ATTRIBUTES:
                found.setdefault(node.value.id, {}).setdefault(node.attr, None)
    for name, attrs in found.items():
        if name not in tensor_use:
            names[name].use, names[name].attrs = "object", attrs


def _sequence_usage(func, params: list[Param]) -> None:
    """A required forward argument the forward reads as a sequence of tensors (``Param.use`` "sequence"): iterated
    (``for f in feats``), measured (``len(x)``), indexed by a loop variable (``x[i]``: HRNet's branches), unpacked
    (``a, b = inputs``: its ``length``), or given whole to ``torch.cat``/``stack`` (``torch.cat(xs, 1)``), or so
    annotated (``List[Tensor]``). The builder tries a list input for it after the tensor forms."""
    names = {p.name: p for p in params if p.default is None and p.kind == "positional" and not p.use}
    if not names:
        return
    loop_vars = {n.id for f in ast.walk(func) if isinstance(f, (ast.For, ast.comprehension))
                 for n in ast.walk(f.target) if isinstance(n, ast.Name)}
    found: set[str] = {n for n, p in names.items() if re.match(_SEQUENCE_ANNOTATION, p.annotation or "")}
    for node in ast.walk(func):
        if isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.iter, ast.Name):
            found.add(node.iter.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("len", "enumerate",
                                                                                               "zip", "reversed"):
            found.update(a.id for a in node.args if isinstance(a, ast.Name))
        elif isinstance(node, ast.Call) and _last(node.func) in ("cat", "stack", "concat", "hstack", "vstack") \
                and node.args and isinstance(node.args[0], ast.Name):
            found.add(node.args[0].id)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Name) \
                and node.slice.id in loop_vars:
            found.add(node.value.id)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Tuple,
                                                                                                        ast.List)) \
                and isinstance(node.value, ast.Name) and node.value.id in names \
                and not any(isinstance(e, ast.Starred) for e in node.targets[0].elts):
            found.add(node.value.id)
            names[node.value.id].length = names[node.value.id].length or len(node.targets[0].elts)
    for name in found & names.keys():
        names[name].use = "sequence"
    _nested_unpacking(func, names)


def _nested_unpacking(func, names: dict) -> None:
    """An argument unpacked into names (``a, b = input``) of which one is unpacked again (``out, mask = a``): the
    items' lengths in ``Param.nested`` ([2, 0]: a pair, then a tensor)."""
    assigns = [n for n in ast.walk(func) if isinstance(n, ast.Assign) and len(n.targets) == 1
               and isinstance(n.targets[0], (ast.Tuple, ast.List)) and isinstance(n.value, ast.Name)
               and not any(isinstance(e, ast.Starred) for e in n.targets[0].elts)]
    for node in assigns:
        p = names.get(node.value.id)
        if p is None:
            continue
        items = [e.id if isinstance(e, ast.Name) else "" for e in node.targets[0].elts]
        inner = {a.value.id: len(a.targets[0].elts) for a in assigns if a.value.id in items and a.value.id}
        if inner:
            p.nested = [inner.get(i, 0) for i in items]


def _shape_of(node, names) -> str | None:
    """``x.shape`` / ``x.size()`` of an argument in ``names``: its name, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" \
            and not node.args:
        node = node.func
    if isinstance(node, ast.Attribute) and node.attr in ("shape", "size") and isinstance(node.value, ast.Name) \
            and node.value.id in names:
        return node.value.id
    return None


_DOC_SEP = r"\s*[,\u00d7*]\s*|\s+x\s+"
_DOC_SHAPE = rf"[(\[]\s*([A-Za-z_][\w.]*(?:(?:{_DOC_SEP})[A-Za-z_0-9][\w.]*){{1,5}})\s*[)\]]"
_DOC_BARE = r"\s*:\s*([A-Za-z_]\w*(?:\s+x\s+[A-Za-z_0-9]\w*){1,5})\b"  # x: B x T x C
_DOC_TYPES = {"int", "float", "bool", "str", "tensor", "torch.tensor", "optional", "list", "tuple", "dict", "none",
              "longtensor", "floattensor", "torch.longtensor", "torch.floattensor", "array", "ndarray"}


def _first_rebinds(func, names) -> dict[str, int]:
    """Each of ``names`` (a function's arguments) that the function assigns -> the first line that does."""
    rebound: dict[str, int] = {}
    for node in ast.walk(func):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Store):
                    rebound[n.id] = min(rebound.get(n.id, 1 << 30), node.lineno)
    return rebound


def _ranks(func, params: list[Param], doc: str) -> None:
    """The number of dimensions the forward reads its arguments with, before it rebinds them: ``B, N, C = x.shape``
    (or ``x.size()``) gives 3, ``x.dim() == 4`` / ``x.ndim == 4`` / ``len(x.shape) == 4`` gives 4; else the
    docstring's ``x: (B, C, H, W)`` / ``x: [batch, seq_len, dim]``; else the largest ``x.shape[3]`` /
    ``x.size(-2)`` index read (a lower bound). Kept in ``Param.rank`` (0: unknown)."""
    names = {p.name: p for p in params if p.kind in ("positional", "keyword")}
    if not names:
        return
    rebound = _first_rebinds(func, names)  # argument -> the first line that assigns it
    exact: dict[str, int] = {}
    lower: dict[str, int] = {}

    def before(name, node) -> bool:
        return node.lineno < rebound.get(name, 1 << 30) or (
            node.lineno == rebound.get(name) and isinstance(node, ast.Assign))  # B, C = x.shape; x = f(x)

    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Tuple, ast.List)):
            name = _shape_of(node.value, names)
            elts = node.targets[0].elts
            if name and before(name, node) and not any(isinstance(e, ast.Starred) for e in elts):
                exact.setdefault(name, len(elts))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq) \
                and isinstance(node.comparators[0], ast.Constant) and type(node.comparators[0].value) is int:
            left, name = node.left, None
            if isinstance(left, ast.Call) and isinstance(left.func, ast.Attribute) and left.func.attr in (
                    "dim", "ndimension") and isinstance(left.func.value, ast.Name):
                name = left.func.value.id
            elif isinstance(left, ast.Attribute) and left.attr == "ndim" and isinstance(left.value, ast.Name):
                name = left.value.id
            elif isinstance(left, ast.Call) and _last(left.func) == "len" and left.args:
                name = _shape_of(left.args[0], names)
            if name in names and before(name, node):
                exact.setdefault(name, node.comparators[0].value)
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, (ast.Constant, ast.UnaryOp)):
            name = _shape_of(node.value, names)
            index = _int_const(node.slice)
            if name and index is not None and before(name, node):
                lower[name] = max(lower.get(name, 0), index + 1 if index >= 0 else -index)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" \
                and len(node.args) == 1 and isinstance(node.func.value, ast.Name) and node.func.value.id in names:
            index = _int_const(node.args[0])
            name = node.func.value.id
            if index is not None and before(name, node):
                lower[name] = max(lower.get(name, 0), index + 1 if index >= 0 else -index)
    for name, p in names.items():
        rank = exact.get(name)
        if rank is None and doc:
            for line in doc.splitlines():
                at = re.search(rf"(^|\W){re.escape(name)}\b", line)
                m = (re.search(_DOC_SHAPE, line[at.end():]) or re.match(_DOC_BARE, line[at.end():])) if at else None
                items = re.split(_DOC_SEP, m.group(1).strip()) if m else []
                if items and not any(i.lower() in _DOC_TYPES for i in items):
                    rank = len(items)
                    break
        if rank is None and lower.get(name, 0) >= 3:  # a lower bound: only when it says more than a batch of rows
            rank = lower[name]
        if rank and 1 <= rank <= 6:
            p.rank = rank


def _axis_read(node, names) -> tuple[str, int] | None:
    """``x.size(1)``, ``x.shape[1]``, ``x.size()[-1]`` of an argument in ``names``: (name, axis), else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" \
            and len(node.args) == 1 and isinstance(node.func.value, ast.Name) and node.func.value.id in names:
        axis = _int_const(node.args[0])
        return None if axis is None else (node.func.value.id, axis)
    if isinstance(node, ast.Subscript):
        name, axis = _shape_of(node.value, names), _int_const(node.slice)
        return None if name is None or axis is None else (name, axis)
    return None


def _asserted_sizes(func, params: list[Param]) -> None:
    """Sizes the forward requires of an argument before it rebinds it: ``assert x.size(1) == 2`` (a pair loss over
    two embeddings), ``assert x.shape[-1] == 3 and ...``, ``if x.size(1) != 3: raise ValueError``, into
    ``Param.sizes`` as [axis, size]; a size the model keeps (``assert x.shape[-1] == self.n_ctx``, point-e's
    transformers) as [axis, "self.n_ctx"], read from the built model. The builder's forms from the first layer (16
    features, 3 colour channels, 32 steps) meet the assert otherwise."""
    names = {p.name: p for p in params if p.kind in ("positional", "keyword")}
    if not names:
        return
    rebound = _first_rebinds(func, names)
    # axes unpacked into names (``_, _, h, w = x.size()``, ``b, c, h, w = x.shape``): h is (x, 2)
    unpacked: dict = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple) \
                and not any(isinstance(e, ast.Starred) for e in node.targets[0].elts):
            owner = _shape_of(node.value, names)
            for axis, e in enumerate(node.targets[0].elts if owner else ()):
                if isinstance(e, ast.Name) and e.id != "_":
                    unpacked[e.id] = (owner, axis)

    def axis_read(node):
        if isinstance(node, ast.Name) and node.id in unpacked:
            return unpacked[node.id]
        return _axis_read(node, names)

    def required(test, negated: bool) -> list[tuple[str, int, int]]:
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or if negated else ast.And):
            return [r for v in test.values for r in required(v, negated)]
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1
                and isinstance(test.ops[0], ast.NotEq if negated else ast.Eq)):
            return []
        left, right = test.left, test.comparators[0]
        if isinstance(left, ast.Tuple) and isinstance(right, ast.Tuple) and len(left.elts) == len(right.elts):
            # (h, w) != (299, 299): each pair (a tuple differs when any item does)
            return [r for a, b in zip(left.elts, right.elts)
                    for r in required(ast.Compare(left=a, ops=test.ops, comparators=[b]), negated)]
        if _int_const(left) is not None:
            left, right = right, left  # 2 == x.size(1)
        read, size = axis_read(left), _int_const(right)
        if size is None and isinstance(right, ast.Attribute) and isinstance(right.value, ast.Name) \
                and right.value.id == "self":
            size = f"self.{right.attr}"  # assert x.shape[-1] == self.n_ctx: read from the built model
        return [(*read, size)] if read and size is not None and (isinstance(size, str) or size > 0) else []

    for node in ast.walk(func):
        found = required(node.test, False) if isinstance(node, ast.Assert) else required(node.test, True) if (
            isinstance(node, ast.If) and _raises(node.body)) else []
        for name, axis, size in found:
            if node.lineno < rebound.get(name, 1 << 30) and all(a != axis for a, _ in names[name].sizes):
                names[name].sizes.append([axis, size])
    # an axis divided by a number of the model's (``N, C, H, W = x.size(); x.view(N, self.bs, self.bs, C // (self.bs
    # ** 2), H, W)``: LynnHo's DepthToSpace) must be a multiple of it: [axis, "%self.bs ** 2"], read from the built
    # model (a 16-channel form met block sizes 8 and 16 as "shape '[2, 8, 8, 0, 16, 16]' is invalid")
    for node in ast.walk(func):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv) and _model_number(node.right):
            read = axis_read(node.left)
            # (on the line that rebinds the argument too: ``x = x.view(..., C // k, ...)`` reads it first)
            if read and getattr(node, "lineno", 0) <= rebound.get(read[0], 1 << 30) \
                    and all(a != read[1] for a, _ in names[read[0]].sizes):
                names[read[0]].sizes.append([read[1], "%" + ast.unparse(node.right)])


def _model_number(node) -> bool:
    """An expression of the model's attributes and integer constants (``self.bs ** 2``, ``self.groups``), with at
    least one attribute."""
    attrs = 0
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
            attrs += 1
        elif isinstance(n, ast.Name) and n.id == "self" or isinstance(n, (ast.Load, ast.operator, ast.Attribute)):
            continue
        elif isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mult, ast.Pow, ast.Add)):
            continue
        elif not (isinstance(n, ast.Constant) and type(n.value) is int):
            return False
    return attrs > 0


def _int_const(node) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _inherit(found: dict, by_name: dict) -> None:
    """A class that does not define ``__init__`` (or ``forward``) itself takes the parameters of the nearest project
    base that does, as Python does (diffuser's ``class WeightedL1(WeightedLoss)`` defines only ``_loss``: it is
    built as ``WeightedL1(weights, action_dim)``, not ``WeightedL1()``); a base of the same file first, then the
    first class of that name; followed breadth-first through the bases, each once."""
    def nearest(c: Candidate, which: int):
        todo, seen = [(c, b) for b in c.bases], {c.key}
        while todo:
            owner, name = todo.pop(0)  # a base's name is read in the file of the class that names it
            imported = _named_class(owner, name, by_name)
            options = [imported] if imported is not None else sorted(by_name.get(name, []),
                                                                     key=lambda b: b.rel != owner.rel)
            base = next((b for b in options if b.kind == "class" and b.key not in seen), None)
            if base is None:
                continue
            seen.add(base.key)
            if base.own[which]:
                return base
            todo += [(base, b) for b in base.bases]
        return None

    for c in list(found.values()):
        if c.kind != "class":
            continue
        if not c.own[0] and not c.params:
            base = nearest(c, 0)
            if base is not None:
                c.params = copy.deepcopy(base.params)
            else:  # a subclass of one of torch's layers (kaniblu's ``TorchEmbedding(nn.Embedding)``): its signature
                c.params = _torch_layer_params(c.bases, by_name)
        if not c.own[1] and not c.forward:
            base = nearest(c, 1)
            if base is not None:
                c.forward = copy.deepcopy(base.forward)


def _param_at(target, where):
    """The parameter of ``target`` a hand-on reaches: by position (``where`` an int) or by name; None past its end."""
    params = [q for q in target.params if q.kind in ("positional", "keyword")]
    if isinstance(where, int):
        return params[where] if where < len(params) else None
    return next((q for q in params if q.name == where), None)


def _hand_on(found: dict) -> None:
    """A parameter the class only hands on to another class of the project (``Classifier(cfg)`` builds
    ``Transformer(cfg)``, which reads ``cfg.dim``) takes the use that class makes of it; a namespace or mapping the
    class reads itself and also hands on gets the attributes the other class reads too (decision-transformer's
    ``Block(config)`` reads ``config.n_embd`` and builds ``CausalSelfAttention(config)``, which reads
    ``config.n_head``); a string the other class compares takes its values (``choices``)."""
    by_name = _classes_by_name(found)
    for _ in range(3):  # a chain of hand-ons
        for c in found.values():
            for p in c.params:
                if p.use not in ("", "namespace", "mapping", "sequence") or not p.passes:
                    continue
                for callee, where in p.passes:
                    target = _hand_target(c, callee, by_name)
                    if target is None or target is c:
                        continue
                    q = _param_at(target, where)
                    if q is not None and q.choices and not p.choices:
                        # a string handed on to a class that compares it (imethanlee/STGCN's STConvBlock builds
                        # ``GraphConv(approx=graph_conv_approx)``, whose forward tests ``self.approx == "linear"``)
                        p.choices = list(q.choices)
                    if q is not None and not p.choices and not p.use and p.default is None and q.default \
                            and re.fullmatch(r"""(['"])\w[\w\- ]*\1""", q.default):
                        # a required string handed on to a parameter with a string default (graph-cnn.pytorch's
                        # GCN(..., init) builds GraphConvolution(init=init), whose init='xavier' is tested against
                        # 'uniform' / 'xavier' / 'kaiming', else NotImplementedError): that default
                        p.choices = [q.default[1:-1]]
                    if q is not None and (q.accepts or q.item) and not (p.accepts or p.item):
                        # a per-layer argument handed on whole (ConvLSTM_Seg(kernel_size) builds ConvLSTM(kernel_size=
                        # kernel_size), which checks it is a tuple): what the stack accepts (``_layer_checks``)
                        p.accepts, p.item = q.accepts, q.item
                    if q is not None and q.use and not p.use:
                        p.use, p.attrs, p.length = q.use, copy.deepcopy(q.attrs), q.length
                        if isinstance(p.attrs.get("shape"), list):
                            _shape_in_caller(p.attrs, c, callee, target)
                        break
                    if q is not None and q.use == p.use == "sequence":  # Glow hands image_shape to FlowNet,
                        p.length = max(p.length, q.length)  # which unpacks H, W, C = image_shape
                    if q is not None and q.use == p.use:
                        _merge_attrs(p.attrs, q.attrs)


def _shape_in_caller(attrs: dict, c, callee: str, target) -> None:
    """A table's shape handed on (``_tensor_uses``: the sizes of the layer whose weight it replaces, by the
    ``target``'s parameter names) read in ``c``'s own parameters: each size named by the parameter of ``c`` handed to
    that one (by name or position); the shape is dropped when a size reaches ``target`` otherwise."""
    order = [q.name for q in target.params if q.kind in ("positional", "keyword")]
    shape = []
    for size in attrs["shape"]:
        if not isinstance(size, str):
            shape.append(size)
            continue
        at = {size, *([order.index(size)] if size in order else [])}
        mine = next((r.name for r in c.params if any(k == callee and w in at for k, w in r.passes)), None)
        if mine is None:
            del attrs["shape"]
            return
        shape.append(mine)
    attrs["shape"] = shape


def _merge_attrs(into: dict, other: dict) -> None:
    """The attributes (keys) ``other`` reads added to ``into``, at every depth: maum-ai/voicefilter's
    SpeechEmbedder(hp) reads ``hp.embedder.num_mels`` and hands ``hp`` to LinearNorm(hp), which reads
    ``hp.embedder.emb_dim`` (a merge of the top level kept SpeechEmbedder's ``embedder`` without ``emb_dim``)."""
    for key, value in other.items():
        if key not in into:
            into[key] = copy.deepcopy(value)
        elif isinstance(into[key], dict) and isinstance(value, dict):
            _merge_attrs(into[key], value)


def _block_classes(parsed: dict, found: dict, module_classes) -> None:
    """A parameter read only for attributes that a module class of the project defines at class level is that
    class, not a namespace: ``ResNet(block, layers)`` reads ``block.expansion`` and calls ``block(...)`` in
    ``_make_layer`` -> ``block=BasicBlock`` (the first such class the model's file defines or imports, in source
    order: ``Param.use == "class"``, ``attrs == {"class": name}``)."""
    class_attrs: dict[str, set] = {}
    methods: dict[str, set] = {}  # a class's methods, its bases' (by name, among the parsed classes) too
    bases: dict[str, list[str]] = {}
    required: dict[str, int] = {}  # a class's required constructor arguments (positional, no default)
    order: dict[str, list[str]] = {}
    for rel, tree in parsed.items():
        names = []
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name in module_classes:
                attrs = {t.id for n in node.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                         for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
                class_attrs.setdefault(node.name, set()).update(attrs)
                methods.setdefault(node.name, set()).update(
                    n.name for n in node.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("__"))
                bases.setdefault(node.name, []).extend(_last(b) for b in node.bases)
                init = _method(node, "__init__")
                if init is not None and node.name not in required:
                    positional = [*init.args.posonlyargs, *init.args.args][1:]
                    required[node.name] = len(positional) - len(init.args.defaults) if not init.args.kwonlyargs \
                        or all(d is not None for d in init.args.kw_defaults) else -1
                names.append(node.name)
            elif isinstance(node, ast.ImportFrom):
                names += [a.asname or a.name for a in node.names if (a.asname or a.name) in module_classes]
        order[rel] = names
    for c in found.values():
        for p in c.params:
            # annotated as a class of the project's modules: ``block: type[BasicBlock | Bottleneck]`` (Fanziyang-v/
            # PyTorch-Models' ResNet, handed on to a method that calls it), the first one the model's file knows
            typed = re.fullmatch(r"(?:typing\.)?[Tt]ype\[(.+)\]", p.annotation.strip("'\" "))
            named = [n for n in re.findall(r"[A-Za-z_]\w*", typed.group(1)) if n in order.get(c.rel, [])
                     and n != c.name] if typed else []
            if named and p.default is None:
                p.use, p.attrs = "class", {"class": named[0]}
                continue
            keys = set(p.attrs)
            if p.use not in ("namespace", "callable") or not keys or any(isinstance(v, dict)
                                                                         for v in p.attrs.values()):
                continue
            match = next((n for n in order.get(c.rel, []) if n != c.name and keys <= class_attrs.get(n, set())), None)
            if match:
                p.use, p.attrs = "class", {"class": match}
                continue
            # an object of a project class whose methods it calls: ACNet's ``builder: ConvBuilder`` (a module whose
            # methods build layers: ``builder.Conv2dBN(...)``, ``builder.ReLU()``), built with its own constructor,
            # None for each required argument (the annotation's class first, then the file's in source order)
            if p.use != "namespace" or any(v is not None for v in p.attrs.values()):
                continue
            for n in sorted(order.get(c.rel, []), key=lambda n: n != p.annotation.strip("'\"")):
                own = _inherited(n, methods, bases)
                if n != c.name and keys & own and keys <= own | class_attrs.get(n, set()) and required.get(n, 0) >= 0:
                    p.use, p.attrs = "instance", {"class": n, "required": required.get(n, 0)}
                    break


def _torch_layer_params(bases: list[str], by_name: dict) -> list[Param]:
    """The constructor parameters of the first base that is one of torch's layers (``torch.nn.<base>`` in the mapping
    tables, no class of the project by that name), without ``device``/``dtype``; [] when there is none."""
    for base in bases:
        name = base.rsplit(".", 1)[-1]
        if name in by_name or not name[:1].isupper():
            continue
        from mindport.mappings import load_registry

        entry = load_registry().lookup(f"torch.nn.{name}")
        if entry is not None and entry.signature:
            return [Param(p.name, "", "" if p.kind.startswith("var_") else p.default,
                          "keyword" if p.kind == "keyword_only" else p.kind)
                    for p in entry.signature if p.name not in ("device", "dtype")]
    return []


def _inherited(name: str, methods: dict[str, set], bases: dict[str, list[str]]) -> set:
    """The methods of class ``name`` and of its bases among ``methods`` (by name, each once)."""
    out, todo, seen = set(), [name], set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        out |= methods.get(n, set())
        todo += bases.get(n, [])
    return out


def _method(cls: ast.ClassDef, name: str):
    return next((n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name),
                None)


def _last(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


class _Literal:
    """Is an expression something a constructor call may carry to the model's module: constants, containers of them,
    names the module defines, calls of those, and ``args.X`` where X is an argparse option with a literal default
    (replaced by the default)."""

    def __init__(self, module_names: set[str], argdefaults: dict[str, str], local_values: dict | None = None):
        self.names, self.argdefaults = module_names, argdefaults
        self.local_values = local_values or {}  # a name the calling scope bound to a literal: its first value

    def render(self, node: ast.expr) -> str | None:
        node = self._substitute(node)
        return None if node is None else ast.unparse(node)

    def _substitute(self, node):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in self.argdefaults \
                and node.value.id in ("args", "opt", "opts", "config", "cfg", "hparams", "FLAGS", "params"):
            return ast.parse(self.argdefaults[node.attr], mode="eval").body
        if isinstance(node, ast.Constant):
            return node
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            elts = [self._substitute(e) for e in node.elts]
            return None if any(e is None for e in elts) else type(node)(elts=elts, ctx=ast.Load())
        if isinstance(node, ast.Dict):
            keys = [self._substitute(k) if k is not None else None for k in node.keys]
            values = [self._substitute(v) for v in node.values]
            if any(v is None for v in values) or any(k is None for k in keys):
                return None
            return ast.Dict(keys=keys, values=values)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = self._substitute(node.operand)
            return None if inner is None else ast.UnaryOp(op=node.op, operand=inner)
        if isinstance(node, ast.BinOp):
            left, right = self._substitute(node.left), self._substitute(node.right)
            return None if left is None or right is None else ast.BinOp(left=left, op=node.op, right=right)
        if isinstance(node, ast.Name):
            if node.id in self.names or node.id in ("True", "False", "None"):
                return node  # a name the model's module defines: read there, as the module has it
            return self.local_values.get(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("nn", "torch"):
            return node if node.value.id in self.names else None
        if isinstance(node, ast.Call):
            func = self._substitute(node.func) if isinstance(node.func, (ast.Name, ast.Attribute)) else None
            if func is None:
                return None
            args = [self._substitute(a) for a in node.args]
            kws = [(k.arg, self._substitute(k.value)) for k in node.keywords]
            if any(a is None for a in args) or any(v is None or k is None for k, v in kws):
                return None
            return ast.Call(func=func, args=args, keywords=[ast.keyword(arg=k, value=v) for k, v in kws])
        return None

    def call_args(self, call: ast.Call, skip: int = 0, passed_on: frozenset = frozenset()) -> str | None:
        """The call's arguments as source, or None when one is not a literal. ``passed_on`` names the enclosing
        factory's own ``*args``/``**kwargs``: handed on unchanged (``return ResNet(8, [16, 32], **kwargs)``), they are
        empty when the factory is called without arguments, so the call stands for its literal part."""
        parts = []
        positional = call.args[skip:]
        for i, a in enumerate(positional):
            if isinstance(a, ast.Starred):
                if i == len(positional) - 1 and isinstance(a.value, ast.Name) and a.value.id in passed_on:
                    continue
                return None
            text = self.render(a)
            if text is None:
                return None
            parts.append(text)
        for k in call.keywords:
            if k.arg is None:
                if isinstance(k.value, ast.Name) and k.value.id in passed_on:
                    continue
                return None
            text = self.render(k.value)
            if text is None:
                return None
            parts.append(f"{k.arg}={text}")
        out = ", ".join(parts)
        return out if len(out) <= _MAX_LITERAL else None

    def partial_args(self, call: ast.Call, params: list, skip: int = 0) -> dict | None:
        """A call ``call_args`` refused because some arguments are no literal (a name bound to what the data gave,
        ``INPUT_DIM = len(SRC.vocab)``; a call of the script's objects, ``len(dataset.classes)``): {parameter name:
        source} of the literal ones, positional arguments named by ``params`` (the callee's); None when no argument
        is literal, or one cannot be placed (``*args``, ``**kw``, more positional arguments than parameters)."""
        named = [p.name for p in params if p.kind == "positional"]
        known = {p.name for p in params if p.kind in ("positional", "keyword")}
        out: dict[str, str] = {}
        positional = call.args[skip:]
        if len(positional) > len(named) or any(isinstance(a, ast.Starred) for a in positional) \
                or any(k.arg is None or k.arg not in known for k in call.keywords):
            return None
        for name, value in [*zip(named, positional), *[(k.arg, k.value) for k in call.keywords]]:
            text = self.render(value)
            if text is not None:
                out[name] = text
        return out if out and len(out) < len(positional) + len(call.keywords) \
            and len(", ".join(out.values())) <= _MAX_LITERAL else None


def _argparse_defaults(tree) -> dict[str, str]:
    """``parser.add_argument("--num-classes", type=int, default=10)`` -> {"num_classes": "10"} (literal defaults).
    A string default goes through its ``type`` as argparse does (``type=int, default='4'`` -> 4), and through the
    script's own post-processing of the parsed namespace when that is plain Python over the value
    (``args.scale = list(map(lambda x: int(x), args.scale.split('+')))``: '4' -> [4], yulunzhang/RCAN's option.py;
    ``_post_processed``)."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _last(node.func) == "add_argument" and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            long = next((f for f in flags if f.startswith("--")), flags[0])
            dest = next((ast.literal_eval(k.value) for k in node.keywords if k.arg == "dest"
                         and isinstance(k.value, ast.Constant)), long.lstrip("-").replace("-", "_"))
            default = next((k.value for k in node.keywords if k.arg == "default"), None)
            if default is not None:
                try:
                    value = ast.literal_eval(default)
                except (ValueError, SyntaxError, TypeError):
                    continue
                kind = next((k.value.id for k in node.keywords if k.arg == "type" and isinstance(k.value, ast.Name)),
                            "")
                if isinstance(value, str) and kind in ("int", "float"):
                    try:
                        out[str(dest)] = repr(int(value) if kind == "int" else float(value))
                        continue
                    except ValueError:
                        pass
                out[str(dest)] = ast.unparse(default)
            elif (value := _required_option(node)) is not None:
                out[str(dest)] = value
    if out:
        for node in _module_level(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) \
                    and isinstance(node.targets[0].value, ast.Name) and node.targets[0].attr in out:
                value = _post_processed(node.value, node.targets[0].value.id, node.targets[0].attr,
                                        out[node.targets[0].attr])
                if value is not None:
                    out[node.targets[0].attr] = value
        _set_after_parsing(tree, out)
    return out


def _required_option(node: ast.Call) -> str | None:
    """A value for an argparse option with no default that the script requires (``required=True``; the user's
    command line always gives one): its first literal ``choices`` entry, else 2 for ``type=int`` (a small valid
    count, stride or scale: yjn870/IDN-pytorch's ``--scale`` handed to ConvTranspose2d's stride with
    ``output_padding=1`` was guessed 1.0 by its name, a float stride torch refuses, and 1 leaves no room for the
    padding) and 0.5 for ``type=float``; a list of it for ``nargs``. None for anything else (a path, a name: the
    constructor guesser's own rules)."""
    kw = {k.arg: k.value for k in node.keywords}
    if not (isinstance(kw.get("required"), ast.Constant) and kw["required"].value is True):
        return None
    choices = kw.get("choices")
    if isinstance(choices, (ast.List, ast.Tuple)) and choices.elts:
        try:
            value = repr(ast.literal_eval(choices.elts[0]))
        except (ValueError, SyntaxError, TypeError):
            return None
    elif isinstance(kw.get("type"), ast.Name) and kw["type"].id in ("int", "float"):
        value = "2" if kw["type"].id == "int" else "0.5"
    else:
        return None
    nargs = kw.get("nargs")
    if isinstance(nargs, ast.Constant) and nargs.value in ("+", "*"):
        return f"[{value}]"
    if isinstance(nargs, ast.Constant) and isinstance(nargs.value, int) and not isinstance(nargs.value, bool):
        return "[" + ", ".join([value] * nargs.value) + "]"
    return value


def _module_level(tree) -> list:
    """The statements a module runs when it is run as a script: its body and, through them, the bodies of its
    module-level ``if`` (the ``if __name__ == '__main__':`` block, where alipay/Pyraformer's scripts post-process
    the parsed namespace: ``opt.window_size = eval(opt.window_size)``), in source order."""
    out: list = []

    def walk(body) -> None:
        for node in body:
            out.append(node)
            if isinstance(node, ast.If):
                walk(node.body)
                walk(node.orelse)

    walk(tree.body if isinstance(tree, ast.Module) else [])
    return out


def _set_after_parsing(tree, out: dict[str, str]) -> None:
    """Attributes a script sets on its parsed namespace, in source order, added to ``out`` (its literal argparse
    defaults) when the value is plain Python over literals and attributes already known: Atcold/pytorch-PPUU's
    train_IL.py ``opt = parser.parse_args()`` then ``opt.height = 117``, ``opt.width = 24``, ``opt.h_height = 14``,
    ``opt.hidden_size = opt.nfeature*opt.h_height*opt.h_width``: the model classes reading ``opt.width`` in a
    ``view`` were guessed ``width=1.5`` by the name (a width multiplier) and none was built. The first value set
    wins (a branch's ``if opt.layers == 3:`` before its ``else``)."""
    holders = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call) and _last(node.value.func) == "parse_args":
            holders.add(node.targets[0].id)
    if not holders:
        return
    assigns = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
                      and isinstance(n.targets[0], ast.Attribute) and isinstance(n.targets[0].value, ast.Name)
                      and n.targets[0].value.id in holders), key=lambda n: (n.lineno, n.col_offset))
    for node in assigns:
        attr = node.targets[0].attr
        if attr not in out:
            value = _namespace_value(node.value, node.targets[0].value.id, out)
            if value is not None:
                out[attr] = value


def _dict_literal_entries(tree) -> dict[str, str]:
    """The literal entries of the configuration dicts a file binds to a name: ``args = {'gpuid': '0', 'lr': 0.001,
    'num_features': len(cols)}`` then ``DeepFM(args)`` (AmazingDD/DeepFM-pytorch's main.py) -> {"gpuid": "'0'",
    "lr": "0.001"}; ``dict(k=...)`` too, and the entries of a dict nested in one. An entry whose value is not a literal
    (computed from the data) is left out: the builder's small value by its key's name serves there. Read as the
    repository's defaults of a mapping's (or a namespace's) keys, after the argparse defaults
    (``_usage``): a string entry (``'gpuid': '0'`` stored into ``os.environ``) is what no small value by name gives."""
    out: dict[str, str] = {}

    def entries(node) -> list[tuple[str, ast.expr]]:
        if isinstance(node, ast.Dict) and node.keys and all(
                isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys):
            return [(k.value, v) for k, v in zip(node.keys, node.values)]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" \
                and not node.args and node.keywords and all(k.arg for k in node.keywords):
            return [(k.arg, k.value) for k in node.keywords]
        return []

    def collect(node) -> None:
        for key, value in entries(node):
            if entries(value):
                collect(value)
                continue
            try:
                ast.literal_eval(value)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            text = ast.unparse(value)
            if len(text) <= _MAX_LITERAL:
                out.setdefault(key, text)

    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            collect(node.value)
    return out


def _literal_of(text):
    """What a script's ``eval(text)`` / ``ast.literal_eval(text)`` of an option string gives, when the string is a
    Python literal (alipay/Pyraformer: ``-window_size`` of type str, default ``'[4, 4, 4]'``, then
    ``opt.window_size = eval(opt.window_size)``; the builder handed the models the string, and ``opt.window_size[0]``
    was '['). Any other string raises: no value, the default stays."""
    if not isinstance(text, str):
        raise ValueError(text)
    return ast.literal_eval(text)


_SAFE_CALLS = {"list": list, "tuple": tuple, "map": map, "int": int, "float": float, "str": str, "bool": bool,
               "len": len, "sorted": sorted, "eval": _literal_of, "literal_eval": _literal_of}
_SAFE_METHODS = {"split", "strip", "lower", "upper", "replace", "rstrip", "lstrip"}
_SAFE_NODES = (ast.Expression, ast.Call, ast.Name, ast.Load, ast.Store, ast.Attribute, ast.Lambda, ast.arguments,
               ast.arg, ast.Constant, ast.List, ast.Tuple, ast.ListComp, ast.comprehension, ast.BinOp, ast.Add,
               ast.Sub, ast.Mult, ast.FloorDiv, ast.Div, ast.UnaryOp, ast.USub, ast.Subscript, ast.Slice)


def _post_processed(expr, holder: str, attr: str, default: str) -> str | None:
    """The value of a script's ``holder.attr = expr`` over the namespace's literal default, when ``expr`` reads
    ``holder.attr`` (``_namespace_value`` with that attribute alone known). None otherwise."""
    reads = any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == holder
                and n.attr == attr for n in ast.walk(expr))
    return _namespace_value(expr, holder, {attr: default}) if reads else None


def _namespace_value(expr, holder: str, known: dict[str, str]) -> str | None:
    """The value of ``expr`` when it is plain Python over literals and the ``known`` attributes of ``holder`` (their
    literal texts): constants, the builtins of ``_SAFE_CALLS``, string methods of ``_SAFE_METHODS``, lambdas and
    comprehensions, arithmetic without powers, no other name or attribute (evaluated without builtins). None
    otherwise, or when the result is no literal."""
    local = {a.arg for n in ast.walk(expr) if isinstance(n, ast.Lambda) for a in n.args.args}
    local |= {t.id for n in ast.walk(expr) if isinstance(n, ast.comprehension) for t in ast.walk(n.target)
              if isinstance(t, ast.Name)}
    for n in ast.walk(expr):
        if not isinstance(n, _SAFE_NODES):
            return None
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and abs(n.value) > 10_000:
            return None
        if isinstance(n, ast.Attribute):
            if isinstance(n.value, ast.Name) and n.value.id == holder:
                if n.attr not in known:
                    return None
            elif n.attr == "literal_eval" and isinstance(n.value, ast.Name) and n.value.id == "ast":
                continue  # ast.literal_eval(holder.attr): _literal_of
            elif n.attr not in _SAFE_METHODS:
                return None
        if isinstance(n, ast.Name) and n.id not in _SAFE_CALLS and n.id not in local and n.id != holder \
                and n.id != "ast":
            return None
    try:
        import types

        values = {k: ast.literal_eval(v) for k, v in known.items()
                  if any(isinstance(n, ast.Attribute) and n.attr == k for n in ast.walk(expr))}
        result = eval(compile(ast.Expression(expr), "<argparse>", "eval"),  # noqa: S307 - checked above
                      {"__builtins__": {}, **_SAFE_CALLS, "ast": types.SimpleNamespace(literal_eval=_literal_of),
                       holder: types.SimpleNamespace(**values)})
        text = repr(result)
        ast.literal_eval(text)
    except Exception:  # noqa: BLE001 - no value: the literal default stays
        return None
    return text if len(text) <= 200 else None


def _module_names(tree) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names.add(t.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, (ast.If, ast.Try)):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    names |= {(a.asname or a.name).split(".")[0] for a in sub.names if a.name != "*"}
    return names


def _value_spec(node: ast.expr) -> str | None:
    """A literal Python argument of a model call (``model(x, 4, 4)``, ``net(x, mode='norm')`` is a keyword: not
    here) -> ``value:4``; None for anything else."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(value, (int, float, str, bool, type(None))) or (
            isinstance(value, (list, tuple)) and len(repr(value)) <= 80):
        return f"value:{value!r}"
    return None


def _tensor_spec(node: ast.expr) -> str | None:
    """``torch.randn(1, 3, 224, 224)`` / ``torch.randint(0, 100, (2, 16))`` -> an input spec (literal sizes only)."""
    if not isinstance(node, ast.Call):
        return None
    name = _last(node.func)
    if name not in _TENSOR_MAKERS or not isinstance(node.func, ast.Attribute):
        return None
    try:
        if name == "randint":
            args = [ast.literal_eval(a) for a in node.args]
            kw = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg in ("low", "high", "size")}
            if len(args) == 3:
                low, high, size = args
            elif len(args) == 2:
                low, high, size = 0, args[0], args[1]
            else:
                low, high, size = kw.get("low", 0), kw.get("high"), kw.get("size")
            dtype = "int64"
        else:
            if node.args and isinstance(node.args[0], (ast.Tuple, ast.List)):
                size = ast.literal_eval(node.args[0])
            else:
                size = [ast.literal_eval(a) for a in node.args]
            low = high = None
            dtype = _TENSOR_MAKERS[name] or "float32"
        size = tuple(int(v) for v in size)
    except (ValueError, SyntaxError, TypeError):
        return None
    if not size or any(v <= 0 for v in size) or len(size) > 6:
        return None
    n = 1
    for v in size:
        n *= v
    if n > 4_000_000:
        return None
    text = "x".join(map(str, size)) + ":" + dtype
    if dtype == "int64" and high is not None:
        text += f":{int(low)}:{int(high)}"
    return text


def _dict_spec(node: ast.expr, tensors: dict[str, str]) -> str | None:
    """``{"image": torch.randn(2, 3, 32, 32), "mask": mask}`` (string keys, tensors made in the call or bound
    before it) -> ``{image: 2x3x32x32:float32, mask: ...}``; None for anything else."""
    if not isinstance(node, ast.Dict) or not node.keys:
        return None
    items = []
    for key, value in zip(node.keys, node.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and re.fullmatch(r"[\w.\-]+", key.value)):
            return None
        spec = _tensor_spec(value) or (tensors.get(value.id) if isinstance(value, ast.Name) else None)
        if spec is None or not spec[:1].isdigit():
            return None
        items.append(f"{key.value}: {spec}")
    return "{" + ", ".join(items) + "}"


def model_ref(root, rel: str, name: str, dotted: str = "") -> str:
    """The reference ``build_model`` takes for a discovered model under ``root``."""
    return f"{dotted}:{name}" if dotted else f"{Path(root) / rel}:{name}"


def _abstract(func) -> bool:
    """A method whose body does nothing but raise NotImplementedError, ``pass`` or ``...`` (after a docstring)."""
    body = [n for n in func.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    return all(isinstance(n, ast.Pass) or (isinstance(n, ast.Raise) and n.exc is not None
                                           and _last(n.exc.func if isinstance(n.exc, ast.Call) else n.exc)
                                           == "NotImplementedError") for n in body)


def _has_forward(key: str, own: dict, bases: dict, keys_of: dict, seen=None) -> bool:
    """Does the class, or a base class along its project hierarchy, define a forward that computes something? A base
    outside the project other than ``nn.Module`` (a library's model class) is taken to have one."""
    seen = set() if seen is None else seen
    if key in seen:
        return False
    seen.add(key)
    if own[key] is not None:
        return own[key]
    for base in bases[key]:
        if base in keys_of:
            if any(_has_forward(k, own, bases, keys_of, seen) for k in keys_of[base]):
                return True
        elif base not in ("Module", "nn.Module", "torch.nn.Module", "object", "ABC", "Generic"):
            return True
    return False


def _config_fields(cls: ast.ClassDef) -> list[dict]:
    """A configuration class's fields as keyword parameters: its annotated class attributes (a dataclass, a
    NamedTuple: ``vocab_size: int = None``, ``n_layer: int = 12``), else its ``__init__``'s parameters."""
    def default(value):  # a dataclass's field(default_factory=lambda: [3, 3, 9, 3]) is its literal
        if isinstance(value, (ast.Name, ast.Attribute)) and _last(value) == "MISSING":
            # omegaconf's (and dataclasses') marker of a field that must be set: required (efficientvit's
            # DecoderConfig ``in_channels: int = MISSING``; with omegaconf absent the marker was a stand-in class
            # handed on as a size: "unsupported operand type(s) for %: '_StubMeta' and 'int'")
            return None
        if isinstance(value, ast.Call) and _last(value.func) == "field":
            for k in value.keywords:
                if k.arg == "default" or (k.arg == "default_factory" and isinstance(k.value, ast.Lambda)):
                    return ast.unparse(k.value.body if isinstance(k.value, ast.Lambda) else k.value)
        return ast.unparse(value) if value is not None else None

    fields = [Param(n.target.id, ast.unparse(n.annotation), default(n.value), kind="keyword")
              for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
              and "ClassVar" not in ast.unparse(n.annotation)]
    init = _method(cls, "__init__")
    if not fields and init is not None:
        fields = [p for p in _params(init.args, True) if p.kind in ("positional", "keyword")]
    return [vars(p) for p in fields]


def _shadowed_folders(root: Path, parsed: dict) -> dict[str, str]:
    """Files of a folder that is no package, which the repository imports from its root (``from layers.attention
    import Attention``) and whose folder holds a module named like one of the root's that the project imports
    (``layers/utils.py`` beside the root's ``utils/``): with the file's folder first on ``sys.path`` (a sibling-style
    import), ``from utils.masking import ...`` would find the sibling ("'utils' is not a package"). They are imported by
    their dotted name from the root, as the repository's scripts do: rel -> dotted name."""
    imported: set[str] = set()
    for tree in parsed.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
    tops = {name.split(".")[0] for name in imported}
    root_names = {rel.split("/")[0].removesuffix(".py") for rel in parsed} & tops
    siblings: dict[str, set[str]] = {}
    for rel in parsed:
        folder, _, leaf = rel.rpartition("/")
        siblings.setdefault(folder, set()).add(leaf.removesuffix(".py"))
        if "/" in folder:  # a sub-folder is a sibling module (a namespace package) of its parent's files
            parent, _, sub = folder.rpartition("/")
            siblings.setdefault(parent, set()).add(sub)
    out = {}
    for rel in parsed:
        folder = rel.rpartition("/")[0]
        dotted = rel[:-3].replace("/", ".")
        if not folder or dotted not in imported or not all(part.isidentifier() for part in rel[:-3].split("/")):
            continue
        if not (root / rel).with_name("__init__.py").is_file():
            if siblings.get(folder, set()) & root_names:
                out[rel] = dotted
            continue
        # a package named like an installed or standard module (BigVGAN's alias_free_activation/torch/, imported
        # as alias_free_activation.torch.filter): as its own top package, "torch.filter" is looked up in torch
        parts = folder.split("/")
        top = len(parts)
        while top > 0 and (root / "/".join(parts[:top]) / "__init__.py").is_file():
            top -= 1
        if top and _external_module(parts[top]):
            out[rel] = dotted
    return out


def _external_module(name: str) -> bool:
    """A module of the standard library or an installed package (``torch``, ``utils`` is none here)."""
    import importlib.util
    import sys

    if name in sys.stdlib_module_names or name in sys.builtin_module_names:
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def discover(root, files: list[str] | None = None, excluded: list | None = None) -> list[Candidate]:
    """Every model class and factory of the repository at ``root``, with the calls its own code writes.

    Not models, by one rule for every repository: containers (``_NOT_MODELS``) and *abstract bases*, classes with no
    forward that computes anything along their project hierarchy (none at all: ``nn.Module.forward`` raises; or one
    that only raises NotImplementedError / passes). Those are left out and, when ``excluded`` is a list, appended to
    it as "path.py:Name"."""
    root = Path(root)
    files = python_files(root, notebooks=True) if files is None else files
    parsed = {}
    per_file_bases = []
    for rel in files:
        tree, data = _parse(root, rel)
        if tree is None:
            continue
        parsed[rel] = tree
        per_file_bases.append(class_bases(tree))
    module_classes = module_classes_from_bases(per_file_bases)
    other_framework = _OtherFramework(parsed, module_classes)
    found: dict[str, Candidate] = {}
    by_name: dict[str, list[Candidate]] = {}
    own_forward: dict[str, bool | None] = {}  # defines a forward: computing (True), abstract (False), none (None)
    # a file with relative imports in a folder that is no package: imported by its dotted name from the root (a
    # namespace package), as `python -m` or the repository's scripts do
    dotted_of = {rel: rel[:-3].replace("/", ".") for rel, tree in parsed.items()
                 if "/" in rel and rel.endswith(".py") and not (root / rel).with_name("__init__.py").is_file()
                 and all(part.isidentifier() for part in rel[:-3].split("/"))
                 and any(isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(tree))}
    dotted_of.update(_shadowed_folders(root, parsed))
    argdefaults_of = {rel: _argparse_defaults(tree) for rel, tree in parsed.items()}
    repo_argdefaults: dict[str, str] = {}  # every literal argparse default of the repository (the first one wins)
    for defaults in argdefaults_of.values():
        for k, v in defaults.items():
            repo_argdefaults.setdefault(k, v)
    for tree in parsed.values():  # then the literal entries of the configuration dicts it writes (after argparse's)
        for k, v in _dict_literal_entries(tree).items():
            repo_argdefaults.setdefault(k, v)
    for rel, tree in parsed.items():
        dotted = dotted_of.get(rel, "")
        tables = _module_tables(tree)
        helpers = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}  # the module's functions
        configs = [n.name for n in tree.body if isinstance(n, ast.ClassDef) and n.name not in module_classes
                   and re.search(r"(Config|Args|Params|Cfg|Hparams|Options|Settings)$", n.name)]
        config_fields = {n.name: _config_fields(n) for n in tree.body if isinstance(n, ast.ClassDef) and n.name in configs}
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name in module_classes and node.name not in _NOT_MODELS \
                    and not other_framework(rel, node.name):
                init, fwd = _method(node, "__init__"), _method(node, "forward")
                init_params = _params(init.args, True) if init else []
                if init:
                    _choices(init, init_params, tables, residues=True, helpers=helpers,
                             methods=tuple(m for m in node.body if isinstance(m, ast.FunctionDef) and m is not init))
                    _usage(node, init_params, repo_argdefaults, tables, helpers)
                    _layer_checks(node, init_params)
                    _kwargs_keys(init, init_params)
                doc = "\n".join(filter(None, [ast.get_docstring(node) or "",
                                              ast.get_docstring(fwd) if fwd else ""]))
                fwd_params = _params(fwd.args, True) if fwd else []
                if fwd:
                    _ranks(fwd, fwd_params, ast.get_docstring(fwd) or ast.get_docstring(node) or "")
                    _choices(fwd, fwd_params)
                    _asserted_sizes(fwd, fwd_params)
                    _forward_usage(fwd, fwd_params, {m.name: m for m in node.body
                                                     if isinstance(m, ast.FunctionDef) and m is not fwd})
                    _sequence_usage(fwd, fwd_params)
                    _mapping_usage(fwd, fwd_params)
                    _object_usage(fwd, fwd_params)
                    _handed_layers(fwd, fwd_params)
                    _id_arguments(fwd, fwd_params)
                c = Candidate(rel, node.name, "class", node.lineno, init_params, fwd_params, doc,
                              bases=[_last(b) or ast.unparse(b) for b in node.bases], configs=configs,
                              config_fields=config_fields,
                              dotted=dotted)
                c.own = (init is not None, fwd is not None)
                c.imported = {alias: origin[1:] for alias, origin in other_framework.origin(rel).items()
                              if origin[0] == "project" and alias != origin[2] and origin[2] in module_classes}
                c.expansion = next((n.value.value for n in node.body if isinstance(n, ast.Assign)
                                    and any(isinstance(t, ast.Name) and t.id == "expansion" for t in n.targets)
                                    and isinstance(n.value, ast.Constant) and type(n.value.value) is int
                                    and 1 < n.value.value <= 8), 0)
                found[c.key] = c
                by_name.setdefault(node.name, []).append(c)
                own_forward[c.key] = None if fwd is None else not _abstract(fwd)
    _inherit(found, by_name)
    _hand_on(found)
    _hand_on_items(found)
    _block_classes(parsed, found, module_classes)
    keys_of = {name: [c.key for c in cands] for name, cands in by_name.items()}
    for key in [k for k in found if not _has_forward(k, own_forward, {k: found[k].bases for k in found}, keys_of)]:
        if excluded is not None:
            excluded.append(key)
        c = found.pop(key)
        by_name[c.name].remove(c)
    # factories: top-level functions without required arguments that return a module class's (or factory's) call
    changed = True
    while changed:
        changed = False
        for rel, tree in parsed.items():
            for node in tree.body:
                if not isinstance(node, ast.FunctionDef) or f"{rel}:{node.name}" in found or node.name.startswith("_"):
                    continue
                params = _params(node.args, False)
                if any(p.default is None for p in params):
                    continue
                _kwargs_keys(node, params)
                returns = [r.value for r in ast.walk(node) if isinstance(r, ast.Return) and r.value is not None]
                built = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                made = [r.func for r in returns if isinstance(r, ast.Call) and _last(r.func) in by_name]
                if not made and returns and all(isinstance(r, ast.Name) for r in returns) and built & set(by_name):
                    made = [s.value.func for s in ast.walk(node) if isinstance(s, ast.Assign)
                            and isinstance(s.value, ast.Call) and _last(s.value.func) in by_name]
                # ResNeSt's gluon factories build gluon's ResNet, a name its torch models share
                if any(not other_framework.called(rel, f) for f in made):
                    c = Candidate(rel, node.name, "factory", node.lineno, params, dotted=dotted_of.get(rel, ""))
                    found[c.key] = c
                    by_name.setdefault(node.name, []).append(c)
                    changed = True
    _collect_calls(parsed, found, by_name, argdefaults_of)
    # then the usage the repository documents (docstring examples, its Markdown's code): after its code's own calls
    _collect_calls(parsed, found, by_name, {}, pieces=list(_documented_usage(root, parsed)))
    return sorted(found.values(), key=lambda c: (c.rel, c.line))


_FENCED = re.compile(r"^[ \t]*```[ \t]*(?:python|py|python3)[ \t]*\n(.*?)^[ \t]*```", re.M | re.S)
_PROMPT = re.compile(r"^[ \t]*(?:>>>|\.\.\.)(?: |$)(.*)$")
MAX_MARKDOWN = 20  # Markdown files read for usage (README.md first), each up to 200 kB


def _documented_usage(root: Path, parsed: dict):
    """(rel, tree) of the usage a repository documents, each piece parsed alone: the ``>>>`` examples of its
    docstrings, in the file they document (Fanziyang-v/PyTorch-Models' ``>>> model = ResNet(3, 1000, [2, 2, 2, 2],
    [64, 128, 256, 512], BasicBlock) # ResNet-18``, whose ``block`` parameter had no value), and the Python code
    blocks of its Markdown files (a README's ``v = ViT(image_size=256, patch_size=32, ...)`` and ``v(torch.randn(1, 3,
    256, 256))``): constructor calls and inputs read as the code's own are. A piece that does not parse is skipped."""
    for rel, tree in parsed.items():
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node, clean=False)
            if not doc or ">>>" not in doc:
                continue
            lines = [m.group(1) for m in map(_PROMPT.match, doc.splitlines()) if m]
            example = _parsed_example("\n".join(lines))
            if example is not None:
                yield rel, example
    markdown = sorted((p for p in root.rglob("*.md") if p.is_file() and not any(
        part in _SKIP_DIRS or part.startswith(".") for part in p.relative_to(root).parts[:-1])),
        key=lambda p: (p.name.lower() != "readme.md", len(p.relative_to(root).parts), str(p)))
    for path in markdown[:MAX_MARKDOWN]:
        try:
            text = path.read_text("utf-8", "replace")[:200_000]
        except OSError:
            continue
        for block in _FENCED.findall(text):
            example = _parsed_example(textwrap.dedent(block))
            if example is not None:
                yield path.relative_to(root).as_posix(), example


def _parsed_example(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


# deep-learning frameworks other than torch whose classes are also named Module (flax.linen, haiku, equinox) or
# whose models derive from project bases that share a name with a torch one (deepxde's NN, one per backend)
_OTHER_FRAMEWORKS = {"flax", "jax", "haiku", "equinox", "objax", "trax", "tensorflow", "keras", "tf_keras", "paddle",
                     "mindspore", "oneflow", "mxnet", "chainer", "jittor", "megengine"}


class _OtherFramework:
    """Is a top-level class a model of another framework, though its bases' names make it look like an nn.Module
    subclass (``module_classes_from_bases`` goes by names across the repository)? Each base is followed through the
    file's own imports: a base imported from another framework (``from flax import linen as nn`` then
    ``nn.Module``; ``paddle.nn.Layer``), or a project class that is itself no torch module (deepxde's
    ``tensorflow/nn.py:NN(tf.keras.Model)`` against ``pytorch/nn.py:NN(torch.nn.Module)``), is not torch; a base
    that cannot be followed (a star import, a name built at run time) keeps the rule by name. A class is another
    framework's when none of its bases is torch's."""

    def __init__(self, parsed: dict, module_classes):
        self.parsed, self.module_classes = parsed, module_classes
        self.modules: dict[str, str] = {}  # dotted module name (and each dotted suffix) -> file
        for rel in parsed:
            parts = rel[:-3].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            self.modules.setdefault(".".join(parts), rel)
        for rel in parsed:
            parts = rel[:-3].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            for i in range(1, len(parts)):
                self.modules.setdefault(".".join(parts[i:]), rel)
        self.origins: dict[str, dict] = {}
        self.memo: dict[tuple[str, str], bool] = {}

    def __call__(self, rel: str, name: str) -> bool:
        return self._torch(rel, name, set()) is False

    def called(self, rel: str, func: ast.expr) -> bool:
        """Does a call of ``func`` in ``rel`` (``ResNet(...)``) build another framework's class?"""
        origin = self._origin(rel).get(func.id) if isinstance(func, ast.Name) else None
        if origin is None or origin[0] not in ("class", "project"):
            return False
        return self._torch(origin[1], origin[2], set()) is False

    def origin(self, rel: str) -> dict:
        return self._origin(rel)

    def _origin(self, rel: str) -> dict:
        """The file's top-level names: class -> ("class", rel, name); imported -> ("project", file, name) for a
        project module's name, ("module", file) for a project module, ("external", dotted) otherwise; assigned ->
        ("assigned",)."""
        if rel not in self.origins:
            out: dict[str, tuple] = {}
            package = rel.rsplit("/", 1)[0].replace("/", ".") if "/" in rel else ""
            for node in self.parsed[rel].body:
                if isinstance(node, ast.ClassDef):
                    out[node.name] = ("class", rel, node.name)
                elif isinstance(node, ast.Assign):
                    for t in node.targets:
                        if isinstance(t, ast.Name):
                            out[t.id] = ("assigned",)
                elif isinstance(node, ast.Import):
                    for a in node.names:  # import a.b as x binds a.b; import a.b binds a
                        dotted = a.name if a.asname else a.name.split(".")[0]
                        target = self.modules.get(dotted)
                        out[a.asname or dotted] = ("module", target) if target else ("external", dotted)
                elif isinstance(node, ast.ImportFrom):
                    base = _from_module(node, package)
                    target = self.modules.get(base) if (node.level or base.split(".")[0] not in
                                                        _OTHER_FRAMEWORKS | {"torch"}) else None
                    for a in node.names:
                        if a.name == "*":
                            continue
                        sub = self.modules.get(f"{base}.{a.name}" if base else a.name)
                        if sub is not None:
                            out[a.asname or a.name] = ("module", sub)
                        elif target is not None:
                            out[a.asname or a.name] = ("project", target, a.name)
                        elif not node.level:
                            out[a.asname or a.name] = ("external", f"{base}.{a.name}")
            self.origins[rel] = out
        return self.origins[rel]

    def _torch(self, rel: str, name: str, seen: set) -> bool | None:
        """True: an nn.Module subclass; False: not one (another framework's, or no model); None: unknown."""
        key = (rel, name)
        if key in self.memo:
            return self.memo[key]
        if key in seen or rel not in self.parsed:
            return None
        seen.add(key)
        node = next((n for n in self.parsed[rel].body if isinstance(n, ast.ClassDef) and n.name == name), None)
        if node is None:  # re-exported: follow the file's own import of it
            origin = self._origin(rel).get(name)
            answer = self._torch(origin[1], origin[2], seen) if origin and origin[0] == "project" else None
        else:
            verdicts = [self._base(rel, b, seen) for b in node.bases]
            answer = True if True in verdicts else None if None in verdicts else False  # no base: False
        self.memo[key] = answer
        return answer

    def _base(self, rel: str, base: ast.expr, seen: set) -> bool | None:
        """A base that cannot be followed is judged by its name, as ``module_classes_from_bases`` does."""
        chain = []
        while isinstance(base, ast.Attribute):
            chain.insert(0, base.attr)
            base = base.value
        if not isinstance(base, ast.Name):
            return None
        last = chain[-1] if chain else base.id
        by_name = last == "Module" or last in self.module_classes
        origin = self._origin(rel).get(base.id)
        if origin is not None and origin[0] == "external":  # torch.jit.ScriptModule, pl.LightningModule: unknown
            # a project class's name says nothing of another package's class of that name (Django's
            # ``models.Model`` beside the project's own ``class Model(nn.Module)``: khanhnamle1994/MetaRec's
            # Endpoint, MLAlgorithm, MLAlgorithmStatus were tried as models, "built a Endpoint, not a torch.nn.Module")
            top = origin[1].split(".")[0]
            if top in _OTHER_FRAMEWORKS or (top != "torch" and last != "Module" and last in self.module_classes):
                return False
            return by_name or None
        if origin is not None and origin[0] == "assigned":  # MyModule = torch.jit.ScriptModule
            return None
        if origin is not None and origin[0] == "class" and not chain:
            return self._torch(rel, base.id, seen)
        if origin is not None and origin[0] == "project" and not chain:
            return self._torch(origin[1], origin[2], seen)
        if origin is not None and origin[0] == "module" and len(chain) == 1:  # models.Base
            return self._torch(origin[1], chain[0], seen)
        return by_name


def _collect_calls(parsed: dict, found: dict[str, Candidate], by_name: dict[str, list[Candidate]],
                   argdefaults_of: dict | None = None, pieces: list | None = None) -> None:
    """The constructor calls and inputs the repository writes for each candidate: literal calls anywhere (scripts,
    tests, configs, ``__main__`` blocks, factories, registries' ``partial``), with ``args.X`` read from argparse
    defaults; and inputs from ``model(torch.randn(...))`` where ``model`` was built from a candidate in that scope."""
    # a notebook's calls are read in its definitions-only module: a name it leaves out (``INPUT_DIM =
    # len(SRC.vocab)``) is no literal there (the call's literal arguments are kept, ``partial_args``)
    names_of = {rel: notebook_defined_names(tree) if is_notebook(rel) else _module_names(tree)
                for rel, tree in parsed.items()}
    for rel, tree in parsed.items() if pieces is None else pieces:  # pieces: (rel, tree) read instead of the files
        argdefaults = argdefaults_of.get(rel, {}) if argdefaults_of is not None else _argparse_defaults(tree)
        framework = _framework_heads(tree)
        for scope in [tree, *[n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]]:
            bound: dict[str, list[Candidate]] = {}
            tensors: dict[str, str] = {}
            # a name this scope binds to a literal (``nlabels = 10`` in one branch, ``= 100`` in the other, then
            # ``CifarResNeXt(args.cardinality, args.depth, nlabels, ...)``): its first literal value, read by the calls
            # after it (prlz77/ResNeXt.pytorch's train.py: the class was guessed at depth 2 instead)
            local_values: dict[str, ast.expr] = {}
            plain = _Literal(set(), argdefaults)
            body = scope.body
            passed_on = frozenset(a.arg for a in (getattr(scope.args, "vararg", None),
                                                  getattr(scope.args, "kwarg", None)) if a is not None) \
                if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) else frozenset()
            for node in _scope_nodes(body):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    target, value = node.targets[0].id, node.value
                    if target not in local_values and not isinstance(value, ast.Call):
                        literal = plain._substitute(value)
                        if literal is not None:
                            local_values[target] = literal
                    spec = _tensor_spec(value) or _dict_spec(value, tensors)
                    if spec:
                        tensors[target] = spec
                    elif isinstance(value, ast.Call):
                        made = _call_target(value, by_name, rel, framework)
                        if made:
                            bound[target] = made
                        elif _last(value.func) in ("to", "eval", "cuda", "cpu", "float") and isinstance(
                                value.func, ast.Attribute) and isinstance(value.func.value, ast.Call):
                            made = _call_target(value.func.value, by_name, rel, framework)
                            if made:
                                bound[target] = made
                if not isinstance(node, ast.Call):
                    continue
                made = _call_target(node, by_name, rel, framework)
                for c in made or ():
                    lit = _Literal(names_of.get(c.rel, set()) | ({"nn", "torch"} & names_of.get(c.rel, set())),
                                   argdefaults, local_values)
                    text = lit.call_args(node, passed_on=passed_on)
                    if text is not None and text not in c.ctors:
                        c.ctors.append(text)
                    partial = lit.partial_args(node, c.params) if text is None else None
                    if partial and partial not in c.partial_ctors:
                        c.partial_ctors.append(partial)
                if _last(node.func) == "partial" and node.args:
                    for c in _named(node.args[0], by_name):
                        lit = _Literal(names_of.get(c.rel, set()), argdefaults, local_values)
                        text = lit.call_args(node, skip=1, passed_on=passed_on)
                        if text is not None and text not in c.ctors:
                            c.ctors.append(text)
                # inputs: model(x) / Model(...)(torch.randn(...))
                callee = node.func
                targets = bound.get(callee.id) if isinstance(callee, ast.Name) else (
                    _call_target(callee, by_name, rel, framework) if isinstance(callee, ast.Call) else None)
                if targets and node.args and not node.keywords:
                    specs = [_tensor_spec(a) or _dict_spec(a, tensors)
                             or (tensors.get(a.id) if isinstance(a, ast.Name) else None)
                             or _value_spec(a) for a in node.args]
                    if all(specs) and specs[0].startswith(tuple("0123456789{")):
                        for c in targets:
                            if specs not in c.inputs:
                                c.inputs.append(specs)


def _scope_nodes(body):
    """The nodes of a scope in source order, without descending into nested functions or classes."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _framework_heads(tree: ast.Module) -> frozenset[str]:
    """The names a file binds to torch and its modules at its top level (``torch``, ``nn`` of ``from torch import
    nn``, ``F`` of ``import torch.nn.functional as F``)."""
    heads = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            heads |= {(a.asname or a.name.split(".")[0]) for a in node.names
                      if a.name == "torch" or a.name.startswith("torch.")}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "torch":
            heads |= {a.asname or a.name for a in node.names if a.name[:1].islower()}  # modules, not classes
    return frozenset(heads)


def _named(node, by_name) -> list[Candidate]:
    name = _last(node) if isinstance(node, (ast.Name, ast.Attribute)) else ""
    return by_name.get(name, [])


def _call_target(call: ast.Call, by_name, rel: str | None = None, framework=frozenset()) -> list[Candidate] | None:
    """The candidates a call may construct, by the called name; a bare name that a class of the calling file ``rel``
    itself has is that class (xyfJASON/diffusion-models-pytorch: ``DiT_XL_2()`` in models/dit/model.py calls its own
    ``DiT(depth=28, ...)``, and models/dit/dit.py's ``DiT(vae_config, vit_config)`` was tried with those arguments
    first: "unexpected keyword argument 'depth'"). None for a call through a name the file binds to torch's modules
    (``framework``: ``torch.nn.Bilinear(1024, 1024, 1024)`` is torch's layer, not the repository's own ``Bilinear``,
    Brent-Murray/point-dl's: its two-model constructor was tried with those three numbers first)."""
    head = call.func
    while isinstance(head, ast.Attribute):
        head = head.value
    if head is not call.func and isinstance(head, ast.Name) and head.id in framework:
        return None
    made = _named(call.func, by_name)
    if rel is not None and isinstance(call.func, ast.Name):
        own = [c for c in made if c.rel == rel]
        made = own or made
    return made or None


def _from_module(node: ast.ImportFrom, package: str) -> str:
    """The absolute dotted module of a ``from ... import`` in ``package``, as Python resolves it (``from ..backend
    import tf`` in package ``deepxde.nn`` -> ``deepxde.backend``)."""
    base = node.module or ""
    if node.level:
        pkg = package.split(".") if package else []
        pkg = pkg[:len(pkg) - (node.level - 1)] if node.level > 1 else pkg
        base = ".".join([*pkg, *([node.module] if node.module else [])])
    return base


def imported_files(root: Path, rels, files: list[str], cache: dict | None = None, hops: int | None = None) -> list[str]:
    """The files ``rels`` and every project file they import, transitively (``import a.b``, ``from .x import y``,
    a package's ``__init__.py`` on the way), read with ``ast``; in visiting order. ``hops``: only the files at most
    that many imports away (1: the files ``rels`` import themselves; exact for 1, a bound past it)."""
    modules = {}
    for f in files:
        if not f.endswith(".py"):
            continue
        parts = f[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        for i in range(len(parts)):
            modules.setdefault(".".join(parts[i:]), f)
    seen: list[str] = []
    stack = [(rel, 0) for rel in reversed(list(rels))]
    while stack:
        cur, depth = stack.pop()
        if cur in seen:
            continue
        seen.append(cur)
        if hops is not None and depth >= hops:
            continue
        tree = (cache or {}).get(cur)
        if tree is None:
            try:
                tree = notebook_code_tree((root / cur).read_bytes()) if is_notebook(cur) else ast.parse(
                    (root / cur).read_bytes())
            except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            if tree is None:
                continue
            if cache is not None:
                cache[cur] = tree
        package = cur.rsplit("/", 1)[0].replace("/", ".") if "/" in cur else ""
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _from_module(node, package)
                names = [base, *(f"{base}.{a.name}" if base else a.name for a in node.names)]
            for name in names:
                parts = name.split(".")
                for i in range(1, len(parts) + 1):  # the packages on the way: their __init__.py runs too
                    if ".".join(parts[:i]) in modules:
                        stack.append((modules[".".join(parts[:i])], depth + 1))
    return seen


def files_hash(root: Path, rel: str, files: list[str], cache: dict | None = None) -> str:
    """A hash of a file and of every project file it imports, transitively (the re-run cache's key)."""
    digest = hashlib.sha256()
    for cur in sorted(imported_files(root, [rel], files, cache)):
        try:
            data = (root / cur).read_bytes()
        except OSError:
            continue
        digest.update(cur.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()[:20]
