"""Stand-ins for modules a repository imports but this machine lacks (``--stub-missing``; off by default).

A model file often imports what its model never runs: ``tqdm``, ``tensorboard``, ``requests``, ``wandb``, a registry
decorator from ``timm``. With stubs, such an import gives a module whose every attribute is a stand-in class: calling
it gives an instance (and does nothing), a decorator returns what it decorates, a class may derive from it. Whatever
the model really needs from the missing module fails when it is used (building or the forward), so a model proven
with stubs never ran any of their code; the report names the stubbed modules of each model.

The finder is appended to ``sys.meta_path``: it is asked only after every real finder failed, so an installed
module is never replaced, never for the frameworks mindport compares, and only for an import written in the
repository's own files (``roots``): a library's optional import (``try: import triton``) still fails as it should,
and so does the repository's own import inside a ``try`` that handles ImportError (the code has its own answer to
the module being absent: deepxde probes ``import tensorflow`` to choose its backend, and a stub made it choose
TensorFlow).
"""
from __future__ import annotations

import abc
import ast
import builtins
import importlib.abc
import importlib.machinery
import os
import sys
import types

from mindport.discovery.configs import Config

ENV = "MINDPORT_STUB_MISSING"  # set (to a log file) in a process that should stub missing modules
ROOTS_ENV = "MINDPORT_STUB_ROOTS"  # os.pathsep-separated folders: only their files' imports are stubbed
_NEVER = {"torch", "mindspore", "numpy", "mindport", "scipy", "einops", "__main__", "_mindport_user"}
STUBBED: list[str] = []


# the length of a stand-in: a vocabulary's size (saurabhaloneai/image-cap's ``nn.Embedding(len(BertTokenizer.
# from_pretrained('bert-base-uncased')), embed_size)`` with transformers missing: "object of type 'from_pretrained'
# has no len()" stopped 4 of 8 classes); iterating one still gives nothing, and its truth stays False
STAND_IN_LENGTH = 32


class _StubMeta(abc.ABCMeta):
    """ABCMeta's subclass, so that a class deriving from a stub and from an ``abc.ABC`` has one metaclass
    (syuntoku14/pytorch-rl-il's ``class ExperimentWriter(SummaryWriter, Writer)``, tensorboard missing and ``Writer`` an
    ABC: "metaclass conflict" stopped every model of the package at import)."""

    def __call__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and (callable(args[0]) or isinstance(args[0], type)):
            return args[0]  # a decorator: the function or class it decorates
        return super().__call__(*args, **kwargs)

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _stub_class(f"{cls.__qualname__}.{name}")

    def __getitem__(cls, item):  # in annotations: List[int] from a stubbed typing library (beartype.typing)
        return cls

    # a stand-in class holds nothing. Without these, ``key in stub`` and ``for k in stub`` iterate through
    # __getitem__ above, which never ends (syuntoku14/pytorch-rl-il's ``if id in registry.env_specs:``, gym
    # missing: every model of the package stopped by the time limit at import)
    def __contains__(cls, item):
        return False

    def __iter__(cls):
        return iter(())

    def __len__(cls):
        return STAND_IN_LENGTH

    def __or__(cls, other):  # Stub | None
        return cls

    def __ror__(cls, other):
        return cls


class _Stub(metaclass=_StubMeta):
    def __init_subclass__(cls, **kwargs):
        # class keywords meant for the stubbed base: ``class BigVGAN(nn.Module, PyTorchModelHubMixin,
        # library_name="bigvgan", ...)`` (huggingface_hub's mixin); object's refuses them ("BigVGAN.__init_subclass__()
        # takes no keyword arguments") and the whole file failed to import
        super().__init_subclass__()

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]
        return _stub_class("result")()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _stub_class(name)

    def __iter__(self):
        return iter(())

    def __len__(self):
        return STAND_IN_LENGTH

    def __bool__(self):
        return False


def _parsed(file: str):
    """``file``'s ``ast`` tree (None when it cannot be read or parsed): read by the per-file facts below, each
    cached."""
    try:
        with open(file, "rb") as f:
            return ast.parse(f.read())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
_GUARDED: dict[str, frozenset] = {}


def _guarded_lines(file: str) -> frozenset:
    """The lines of ``file`` inside the body of a ``try`` whose handlers catch ImportError (by that name,
    ModuleNotFoundError, Exception, or bare ``except:``), read with ``ast`` once per file."""
    if file not in _GUARDED:
        lines: set[int] = set()
        tree = _parsed(file)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Try) and any(_catches_import_error(h.type) for h in node.handlers):
                for stmt in node.body:
                    lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
        _GUARDED[file] = frozenset(lines)
    return _GUARDED[file]


def _catches_import_error(kind) -> bool:
    if kind is None:
        return True
    names = kind.elts if isinstance(kind, ast.Tuple) else [kind]
    return any((n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else "")
               in _IMPORT_ERRORS for n in names)


def _stub_class(name: str) -> type:
    return _StubMeta(name.rsplit(".", 1)[-1], (_Stub,), {"__qualname__": name, "__module__": "mindport_stub"})


# configuration dictionaries of libraries this machine may lack: a dict whose keys are also attributes, nested dicts
# made alike, is what each of them is to the code that builds a model from it (ViT-pytorch's configs.py builds
# ``ml_collections.ConfigDict()`` trees at import; a stand-in class there failed "'ConfigDict' object has no attribute
# 'size'"). The module stays a stub otherwise and is reported as stubbed.
ATTRIBUTE_DICTS = {
    "ml_collections": ("ConfigDict", "FrozenConfigDict"),
    "ml_collections.config_dict": ("ConfigDict", "FrozenConfigDict"),
    "easydict": ("EasyDict",),
    "yacs.config": ("CfgNode",),
    "addict": ("Dict", "Addict"),
    "attrdict": ("AttrDict",),
    "munch": ("Munch",),
    "box": ("Box",),
    "dotmap": ("DotMap",),
}
_NOT_KEYS = {"new_allowed", "type_safe", "convert_dict", "key_list", "frozen_box", "default_box"}


class AttributeDict(Config):
    """configs.Config built as the libraries build theirs: from a mapping and/or keywords (their own options,
    ``new_allowed`` ..., are not keys), with the methods model code calls on them."""

    def __init__(self, *args, **kwargs):
        data = args[0] if args and isinstance(args[0], dict) else {}
        super().__init__(data, **{k: v for k, v in kwargs.items() if k not in _NOT_KEYS})

    def clone(self):  # yacs
        import copy

        return copy.deepcopy(self)

    copy_and_resolve_references = clone  # ml_collections

    def to_dict(self):
        return {k: v.to_dict() if isinstance(v, AttributeDict) else v for k, v in self.items()}

    def freeze(self):
        return self

    defrost = lock = unlock = freeze


# reinforcement-learning environments of a library this machine may lack: ``gym.make(name)`` gives an environment
# whose spaces have sizes (sweetice/Deep-reinforcement-learning-with-pytorch's ``NUM_STATES =
# env.observation_space.shape[0]`` at module level, then ``nn.Linear(NUM_STATES, 50)``: a stand-in class there was
# "empty(): argument 'size' failed to unpack the object", 5 of its 15 classes unbuilt). Every environment is the same
# small one (CartPole's: 4 observations, 2 actions), whichever name it is asked for; any size builds the class, and
# the torch and MindSpore sides get the same. An episode ends at its first step.
ENVIRONMENT_MODULES = {"gym", "gymnasium"}
ENVIRONMENT_OBSERVATIONS = 4
ENVIRONMENT_ACTIONS = 2


class StandInSpace:
    """A space that answers as a ``Box`` of shape (n,) in [-1, 1] and as a ``Discrete(n)`` at once (``.shape[0]``,
    ``.n``, ``.high[0]``); its samples are the discrete action 0."""

    def __init__(self, n: int):
        import numpy as np

        self.n = n
        self.shape = (n,)
        self.high = np.ones(n, dtype=np.float32)
        self.low = -self.high
        self.dtype = np.dtype("float32")

    def sample(self, *args, **kwargs):
        return 0

    def seed(self, *args, **kwargs):
        return [0]

    def contains(self, x) -> bool:
        return True

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _stub_class(f"space.{name}")


class StandInEnv:
    """``gym.make(...)``'s environment (``ENVIRONMENT_MODULES``): sized spaces, ``unwrapped`` itself, an episode of
    one step (old gym's ``(observation, reward, done, info)``); any other attribute a stand-in."""

    def __init__(self, *args, **kwargs):
        self.observation_space = StandInSpace(ENVIRONMENT_OBSERVATIONS)
        self.action_space = StandInSpace(ENVIRONMENT_ACTIONS)
        self.unwrapped = self

    def reset(self, *args, **kwargs):
        import numpy as np

        return np.zeros(ENVIRONMENT_OBSERVATIONS, dtype=np.float32)

    def step(self, action):
        import numpy as np

        return np.zeros(ENVIRONMENT_OBSERVATIONS, dtype=np.float32), 0.0, True, {}

    def seed(self, *args, **kwargs):
        return [0]

    def render(self, *args, **kwargs):
        return None

    close = render

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _stub_class(f"env.{name}")()


# torch-based packages whose mapped pieces have torch references (mappings/data/packages.toml, each entry's ``torch``
# name and ``aliases``): a stubbed ``timm.models.layers`` holds the reference ``to_2tuple``, ``DropPath``,
# ``trunc_normal_`` ... there, so the torch side of a proof runs what the converted code's mindport.runtime.ecosystem
# pieces run on the MindSpore side. A stand-in instead failed FocalNet and GFNet ("'to_2tuple' object is not
# subscriptable"); every other name of the package stays a stand-in.
_REFERENCE_MODULES = {"timm": "timm.layers", "torchvision": "torchvision.ops", "pytorch_lightning": "pytorch_lightning",
                      "lightning": "pytorch_lightning"}
_REFERENCES: dict[str, dict[str, str]] | None = None


def _reference_names() -> dict[str, dict[str, str]]:
    """{module: {name: reference module}} from the mapping entries of torch-based packages (read once)."""
    global _REFERENCES
    if _REFERENCES is None:
        import tomllib

        from mindport.mappings import DATA_DIR

        _REFERENCES = {}
        try:
            entries = tomllib.loads((DATA_DIR / "packages.toml").read_text(encoding="utf-8")).get("api", [])
        except (OSError, tomllib.TOMLDecodeError):
            entries = []
        for entry in entries:
            for full in [entry["torch"], *entry.get("aliases", [])]:
                module, _, name = full.rpartition(".")
                reference = _REFERENCE_MODULES.get(module.split(".")[0])
                if reference is not None:
                    _REFERENCES.setdefault(module, {})[name] = reference
    return _REFERENCES


def _set_references(module: types.ModuleType) -> None:
    import importlib

    for name, reference in _reference_names().get(module.__name__, {}).items():
        source = importlib.import_module(f"mindport.discovery.package_references.{reference}")
        if hasattr(source, name):  # a mapped name with no torch reference (Lightning's Trainer) stays a stand-in
            setattr(module, name, getattr(source, name))


_STATEMENT_MODULES: dict[str, dict[int, frozenset]] = {}


def _statement_modules(file: str) -> dict[int, frozenset]:
    """{line: the modules the import statement there names} for ``file`` (every line of a statement written over
    several): ``import a.b.c`` and ``from a.b.c import n`` name a.b.c, a.b and a; a relative import names none here.
    Read with ``ast`` once per file."""
    if file not in _STATEMENT_MODULES:
        lines: dict[int, set] = {}
        tree = _parsed(file)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Import):
                dotted = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                dotted = [node.module]
            else:
                continue
            names = {".".join(d.split(".")[:i]) for d in dotted for i in range(1, d.count(".") + 2)}
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                lines.setdefault(line, set()).update(names)
        _STATEMENT_MODULES[file] = {k: frozenset(v) for k, v in lines.items()}
    return _STATEMENT_MODULES[file]


_METACLASSES: dict[str, frozenset] = {}


def _metaclass_names(file: str) -> frozenset:
    """The names ``file``'s classes take as their metaclass (``class Net(nn.Module, metaclass=Named)``: Named, also
    the last name of ``metaclass=utils.Named``), read with ``ast`` once per file."""
    if file not in _METACLASSES:
        names: set[str] = set()
        tree = _parsed(file)
        for node in ast.walk(tree) if tree is not None else ():
            for keyword in node.keywords if isinstance(node, ast.ClassDef) else ():
                if keyword.arg == "metaclass" and isinstance(keyword.value, (ast.Name, ast.Attribute)):
                    names.add(keyword.value.id if isinstance(keyword.value, ast.Name) else keyword.value.attr)
        _METACLASSES[file] = frozenset(names)
    return _METACLASSES[file]


def _asking_frame(frame):
    """``frame``, or the first frame outside the import machinery from it outwards (None when there is none)."""
    while frame is not None:
        file = frame.f_code.co_filename
        if not file.startswith("<frozen") and "importlib" not in file and file != __file__:
            return frame
        frame = frame.f_back
    return None


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        asking = _asking_frame(sys._getframe(1))
        if asking is not None and name in _metaclass_names(asking.f_code.co_filename):
            # a metaclass of the repository's classes (flowgmm's ``class SmallResnet(nn.Module, metaclass=Named)``,
            # oil missing): a stand-in class there was "metaclass conflict" at import (no metaclass derives from it);
            # a plain metaclass builds the class as ``type`` does, less what the missing one added (a name)
            return type(name, (type,), {"__qualname__": f"{self.__name__}.{name}", "__module__": "mindport_stub"})
        value = _stub_class(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, roots: list[str]):
        self.roots = tuple(os.path.realpath(r) + os.sep for r in roots if r)

    def find_spec(self, fullname, path=None, target=None):
        top = sys.modules.get(fullname.split(".")[0])
        if fullname.startswith("_") and not ("." in fullname and top is not None and self._in_roots(top)):
            # a private module (``_ssl``, ``_mindport_user``) is nobody's to stub; a module of the repository's own
            # package that is not there is (Relation-Shape-CNN's ``_ext/pointnet2/__init__.py``: ``from ._pointnet2
            # import lib``, the CUDA extension its build_ffi.py compiles; the models that call it fail at their
            # forward, the others no longer stop at import)
            return None
        if "." in fullname and top is not None and not isinstance(top, _StubModule) and not self._in_roots(top):
            # a submodule an installed package no longer has. Named by the import statement itself (``from
            # pytorch_lightning.utilities.distributed import rank_zero_only``, moved to ``.rank_zero`` in Lightning
            # 1.8; ``from torch.utils.ffi import _wrap_function``, torch 1.0's CUDA-extension glue, gone since): a
            # stand-in module, as for a missing package (mx-mark/VideoTransformer-pytorch: 14 classes stopped at
            # import; Relation-Shape-CNN: 9), named in the report by its full name. Only asked for by the import
            # machinery (``from collections import Sequence``, gone since Python 3.10, asks for a submodule
            # ``collections.Sequence`` last): no stub module, a stub module there became a base class; the name
            # gets its stand-in from _missing_names_import below (a package of the repository's own keeps its
            # stubs: a file the conversion left out, nnAudio's gammatone)
            if top.__name__ in _NAMES_NEVER or not self._statement_names(fullname, sys._getframe(1)):
                return None
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        if fullname.split(".")[0] in _NEVER:
            return None
        if not isinstance(top, _StubModule) and not self._from_project():
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def _from_project(self) -> bool:
        """Is the import statement being run in one of the repository's files, outside a ``try`` that handles its
        ImportError?"""
        return self._project_line(sys._getframe(2))

    def _project_line(self, frame) -> bool:
        """Is ``frame`` (or the first frame outside the import machinery from it outwards) at a line of the
        repository's files outside a ``try`` that handles ImportError?"""
        frame = _asking_frame(frame)
        if frame is None:
            return False
        file = frame.f_code.co_filename
        return os.path.realpath(file).startswith(self.roots) and frame.f_lineno not in _guarded_lines(file)

    def _statement_names(self, fullname: str, frame) -> bool:
        """Is the import statement being run at a line of the repository's files (outside a ``try`` that handles
        ImportError) one that names module ``fullname`` itself (``import a.b.c``, ``from a.b.c import n``: a.b.c and
        its parents a.b, a)?"""
        frame = _asking_frame(frame)
        if frame is None or not self._project_line(frame):
            return False
        return fullname in _statement_modules(frame.f_code.co_filename).get(frame.f_lineno, ())

    def _in_roots(self, module) -> bool:
        """Is ``module`` (a package) one of the repository's own?"""
        paths = list(getattr(module, "__path__", None) or []) + [getattr(module, "__file__", None) or ""]
        # the root folder itself too: a file written for another project's package (RepLKNet's
        # segmentation/replknet.py, ``from ..builder import BACKBONES`` for mmseg's backbones folder) imports its
        # relative module from the repository's root, imported as a package by its folder's name (the sweep's
        # ``src``): "No module named 'src.builder'" before, every model of the file not built
        return any(p and (os.path.realpath(p) + os.sep).startswith(self.roots) for p in paths)

    def _label(self, name: str) -> str:
        return name.split(".")[0]

    def _label_of(self, name: str) -> str:
        top = sys.modules.get(name.split(".")[0])
        if top is not None and not isinstance(top, _StubModule) and not self._in_roots(top):
            return name  # a submodule an installed package lacks: the package itself is real
        return self._label(name)

    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        for name in ATTRIBUTE_DICTS.get(module.__name__, ()):
            setattr(module, name, type(name, (AttributeDict,), {"__module__": module.__name__}))
        if module.__name__.split(".")[0] in _REFERENCE_MODULES:
            _set_references(module)
        if module.__name__ in ENVIRONMENT_MODULES:
            module.make = StandInEnv
        _record(self._label_of(module.__name__))


def _record(label: str) -> None:
    """Name ``label`` among the stand-ins of this process (and in the log file the builder reads)."""
    if label not in STUBBED:
        STUBBED.append(label)
        log = os.environ.get(ENV)
        if log and log != "1":
            try:
                with open(log, "a", encoding="utf-8") as f:
                    f.write(label + "\n")
            except OSError:
                pass


# an installed library whose names stay its own even where they are missing: what MindSpore's side lacks is a real
# difference (and the converter's business), never a stand-in. torch is the reference: a name the installed torch
# removed (Pyraformer's unused ``from torch.functional import align_tensors``, 13 classes stopped at import) gets a
# stand-in as another library's would; a use of it fails there, named as a stand-in
_NAMES_NEVER = {"mindspore", "mindport"}


def _missing_names_import(original, finder: "_Finder"):
    """``builtins.__import__`` that gives a stand-in for a name an installed library no longer has, when a file of
    the repository imports it by ``from library import name`` outside a ``try`` that handles the ImportError
    (humorbeing/world-models-pytorch: ``from scipy.misc import imresize``, removed in SciPy 1.3, at the top of each
    training file; every model of those files, 13 of the 15 tried, stopped at import though none calls it). A name
    with a current equivalent is put back as it was by ``legacy_names`` first; a name of the repository's own package
    stays missing (a bug of the repository, as in torch)."""

    def __import__(name, globals=None, locals=None, fromlist=(), level=0):
        module = original(name, globals, locals, fromlist, level)
        if not fromlist or not isinstance(module, types.ModuleType) or isinstance(module, _StubModule):
            return module
        missing = [n for n in fromlist if n != "*" and not hasattr(module, n)]
        if (missing and module.__name__.split(".")[0] not in _NAMES_NEVER and not finder._in_roots(module)
                and finder._project_line(sys._getframe(1))):
            for n in missing:
                setattr(module, n, _stub_class(f"{module.__name__}.{n}"))
                _record(f"{module.__name__}.{n}")
        return module

    __import__._mindport_names = True
    return __import__


class _LoggingFinder(_Finder):
    """``torch.utils.tensorboard`` exists in torch but imports ``tensorboard``: when that is missing, the project's
    ``from torch.utils.tensorboard import SummaryWriter`` (logging only) gets a stub too. Asked first, for this
    name only, and only when ``tensorboard`` is absent."""

    NAMES = ("torch.utils.tensorboard",)

    def _label(self, name: str) -> str:
        return self.NAMES[0]

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(self.NAMES) or not self._from_project():
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)


class _SelfImportFinder(_Finder):
    """A repository file named like the package it imports (fab-torch's ``fab/wrappers/normflows.py`` doing ``from
    normflows import NormalizingFlow``, the library not installed here): the file's folder is on sys.path for
    sibling-style imports, so the bare name found the file itself and it imported itself half-initialised ("cannot
    import name 'NormalizingFlow' from partially initialized module 'normflows'"), failing every file that imports
    it. The bare name gets a stand-in when the path would give the importing file back; an installed package of that
    name is found first on sys.path and is left alone. Asked first."""

    def find_spec(self, fullname, path=None, target=None):
        if "." in fullname or fullname in sys.modules or fullname in _NEVER:
            return None
        frame = sys._getframe(1)
        while frame is not None and (frame.f_code.co_filename.startswith("<frozen")
                                     or "importlib" in frame.f_code.co_filename or frame.f_code.co_filename == __file__):
            frame = frame.f_back
        if frame is None:
            return None
        importer = os.path.realpath(frame.f_code.co_filename)
        if not importer.startswith(self.roots):
            return None
        found = importlib.machinery.PathFinder.find_spec(fullname)
        if found is None or not found.origin or os.path.realpath(found.origin) != importer:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)


def install(roots: list[str] | None = None) -> None:
    """Stub what the files under ``roots`` (default: the folders in MINDPORT_STUB_ROOTS) import and cannot find."""
    import importlib.util

    from mindport.discovery.notebooks import MODULES_ENV

    if roots is None:
        roots = [r for r in os.environ.get(ROOTS_ENV, "").split(os.pathsep) if r]
    # a notebook's definitions-only module is the repository's code, written outside it (discovery/notebooks.py)
    roots = [*roots, *([os.environ[MODULES_ENV]] if os.environ.get(MODULES_ENV) else [])]
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        finder = _Finder(roots)
        sys.meta_path.append(finder)
        if not getattr(builtins.__import__, "_mindport_names", False):
            builtins.__import__ = _missing_names_import(builtins.__import__, finder)
        if importlib.util.find_spec("tensorboard") is None:
            sys.meta_path.insert(0, _LoggingFinder(roots))
        sys.meta_path.insert(0, _SelfImportFinder(roots))
