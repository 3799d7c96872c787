"""Issue 30's measure: the by-name bindings left in a converted tree (timm's port, huggingface/pytorch-image-models).

A *by-name binding* is a call ``mp_adapt.api("torch.nn.Conv2d")`` (any name the file binds to
``mindport.runtime.adapt``): a torch API bound at run time by its name in a string, a layer class or function
passed as a value (``norm_layer=nn.BatchNorm2d``, ``act_layer=nn.GELU``) the converter could not settle statically.
The issue's bar: timm's port <= 50 of them. Read with ``ast`` from the converted files (no code is run):

* ``mp_adapt.api(...)`` bindings, by the torch name bound and by the syntactic shape of the site (the nearest
  enclosing construct that says how the value is used: a parameter's default, a keyword or positional argument of
  a call, ``partial(...)``'s first argument, the callee of a call, an ``isinstance``/``issubclass`` operand, a
  class attribute, a dict value, an assignment, a base class, a comparison, ...; a branch of ``a if c else b`` or a
  member of a tuple/list is read through to its container's shape, prefixed ``ifexp>`` / ``tuple>``);
* ``jit_ignore`` / ``jit_is_scripting`` sites (attributes of a runtime module of those names, decorators included);
* every ``mindport.runtime`` site, counted as ``benchmarks/runtime_share.py`` counts them (``file_sites``: a call,
  a decorator that is not a call or a base class whose callee is rooted in a name bound to mindport);
* the converted files that import mindport, of all converted ``.py`` files.

Usage (from the project root; timm's ``timm/`` package extracted from the fetched snapshot)::

    git --git-dir=/work/.mirror/huggingface+pytorch-image-models/repo archive HEAD timm | tar -x -C /tmp/timm53/src
    env -u PYTHONPATH PYTHONPATH=$PWD OMP_NUM_THREADS=1 .venv/bin/python -m mindport convert \\
        /tmp/timm53/src/timm -o /tmp/timm53/out --jobs 1
    env -u PYTHONPATH PYTHONPATH=$PWD .venv/bin/python benchmarks/timm_bindings.py /tmp/timm53/out [--top 30] \\
        [--json OUT] [--sites SHAPE]

Figures (timm aa4b5850 of 2026-08-08: 284 .py files, 250 converted, 34 unchanged, none failed or copied for a
failure; ``convert --jobs 1`` took 12 min 40 s wall, 4 min 50 s CPU, on the shared 2 cores):

  ==========================  =====  ===========  =================  ========================  =============
  tree                        api()  jit_ignore   jit_is_scripting   runtime sites / all       import mindport
  ==========================  =====  ===========  =================  ========================  =============
  when issue 30 was filed     1490   325          219                -                         -
  lead53 2536e375 (timm53 1)  20     0            0                  3641 / 43144              228 / 284
  timm53 d11c16ff             9      0            0                  3657 / 43203              228 / 284
  ==========================  =====  ===========  =================  ========================  =============

  2536e375's 20 by shape: 8 tuple>default argument (``act_layer=(nn.ReLU6, None)``, cpubone/efficientvit_mit),
  7 called (``torch.empty(..., **dd)`` x2, ``torch.tensor(..., **dd)`` x2, ``torch.eye(k, **dd)``,
  ``checkpoint(function, *args, **kwargs)``, ``torch.amp.GradScaler(device=device)``), 2 base class
  (``DataLoader``, ``nn.SyncBatchNorm``), 2 dict value (create_act's ``relu6=nn.ReLU6``, ``selu=nn.SELU``),
  1 tuple>Subscript (hiera's ``[nn.Identity, nn.Conv1d, nn.Conv2d, nn.Conv3d][n]``). By name: 9 ReLU6, 2 tensor,
  2 empty, 1 each of SELU, Conv1d, eye, checkpoint, GradScaler, DataLoader, SyncBatchNorm.
  d11c16ff (a value whose construction is the runtime's own Cell, TableCallTransform._own_layer_class): the 11
  ReLU6/SELU/Conv1d values are value classes of their files (``TorchReLU6(mp_nn.ReLU6)``); 9 left: 7 called,
  2 base class. The +16 runtime sites are those classes' own references to their runtime Cells (static names,
  not by-name bindings).

Models proven (timm54, ``mindport validate`` with its GRAPH_MODE check, num_classes=10, batch 2, seeded init, timm's
source against the tree converted with the branch, torchvision's import-only stand-in on the path)::

    env -u PYTHONPATH PYTHONPATH=$PWD:/tmp/timm53/stubs OMP_NUM_THREADS=1 .venv/bin/python -m mindport validate \
        --torch /tmp/timm53/src/timm/models/resnet.py:resnet18 --ms /tmp/timm54/ms/timm/models/resnet.py:resnet18 \
        --ctor "num_classes=10" --input 2x3x32x32:float32

  16 model functions of 15 families, 32x32 inputs (64x64 and ``img_size=64`` for mixer_s32_224 and levit_128s,
  64x64 for mobilevit_xxs, ``img_size=32`` for deit_tiny_patch16_224). First contact (lead53 f364496c, zero
  edits): 12 PASS in PyNative and GRAPH_MODE (resnet18, resnet26d, regnetx_002, densenet121, mixer_s32_224,
  deit_tiny_patch16_224, convnextv2_atto, levit_128s, poolformer_s12, mobilevit_xxs, repvgg_a0, cspresnet50), 0
  diverged, 0 graph-failed, 4 ms-failed with one class (mobilenetv3_small_050, efficientnet_b0, ghostnet_050,
  rexnet_100: "No equivalent norm_act layer for torchbatchnorm2d", timm's get_norm_act_layer looks a norm class
  up by ``__name__`` and the value class ``TorchBatchNorm2d`` had the file's name). timm54 c4fc6750 (a value
  class's ``__name__`` is torch's; ``**dd`` of a local ``dict(...)`` or of a display with any values written out):
  16 of 16 PASS in PyNative and GRAPH_MODE (the 4 and the 12 again, on the tree converted anew into
  /tmp/timm54/after; the 12 passed on both trees). The bindings of that tree: 4 (``**dd`` x5 of deit/csatv2
  gone: 2 called, ``checkpoint``, ``GradScaler``; 2 base class), runtime sites 3651 / 43364, 228 / 284 import
  mindport. Still open: densenet's ``from torch.jit.annotations import List`` has no mapping (4 MP104); the
  file keeps ``import torch`` for the annotations ``List[torch.Tensor]`` (it passes, but needs torch installed).
"""
from __future__ import annotations

import argparse
import ast
import collections
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runtime_share import _runtime_names, file_sites  # noqa: E402  (the one site count of the benchmarks)

ADAPT = "mindport.runtime.adapt"
JIT = ("jit_ignore", "jit_is_scripting")


def _adapt_names(tree: ast.Module) -> set[str]:
    """Names the file binds to mindport.runtime.adapt (``from mindport.runtime import adapt as mp_adapt``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "mindport.runtime" and not node.level:
            names.update(a.asname or a.name for a in node.names if a.name == "adapt")
        elif isinstance(node, ast.Import):
            names.update(a.asname for a in node.names if a.name == ADAPT and a.asname)
    return names


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    out = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            out[id(child)] = node
    return out


def _callee(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return "?"


def shape_of(node: ast.AST, parents: dict[int, ast.AST]) -> str:
    """The syntactic shape of a value site (see the module docstring)."""
    prefix = ""
    parent = parents.get(id(node))
    while isinstance(parent, (ast.IfExp, ast.Tuple, ast.List)) and not (
            isinstance(parent, ast.IfExp) and parent.test is node):
        prefix += "ifexp>" if isinstance(parent, ast.IfExp) else "tuple>"
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, ast.arguments):
        return prefix + "default argument"
    if isinstance(parent, ast.keyword):
        call = parents.get(id(parent))
        callee = _callee(call.func) if isinstance(call, ast.Call) else "?"
        if callee == "dict":
            return prefix + "dict value"
        if callee == "partial":
            return prefix + "partial keyword"
        return prefix + "call keyword"
    if isinstance(parent, ast.Call):
        if parent.func is node:
            return prefix + "called"
        callee = _callee(parent.func)
        if callee in ("isinstance", "issubclass"):
            return prefix + callee
        if callee == "partial" and parent.args and parent.args[0] is node:
            return prefix + "partial(first)"
        return prefix + "call positional"
    if isinstance(parent, ast.Dict):
        return prefix + "dict value"
    if isinstance(parent, ast.ClassDef):
        return prefix + "base class"
    if isinstance(parent, (ast.Assign, ast.AnnAssign)):
        holder = parents.get(id(parent))
        return prefix + ("class attribute" if isinstance(holder, ast.ClassDef) else "assignment")
    if isinstance(parent, ast.Compare):
        return prefix + "comparison"
    if isinstance(parent, ast.Return):
        return prefix + "return"
    if isinstance(parent, ast.Attribute):
        return prefix + f"attribute .{parent.attr}"
    return prefix + type(parent).__name__


def file_figures(code: str) -> dict:
    tree = ast.parse(code)
    adapt = _adapt_names(tree)
    runtime = _runtime_names(tree)
    parents = _parents(tree)
    bindings = []
    jit = collections.Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "api" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in adapt:
            name = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else "?"
            bindings.append((name, shape_of(node, parents), node.lineno))
        elif isinstance(node, ast.Attribute) and node.attr in JIT and isinstance(node.value, ast.Name) \
                and node.value.id in runtime:
            jit[node.attr] += 1
    total, helpers, imports = file_sites(code)
    return {"bindings": bindings, "jit": jit, "sites": total, "runtime_sites": sum(helpers.values()),
            "helpers": helpers, "imports": imports}


def measure(out: Path) -> dict:
    files = sorted(p for p in out.rglob("*.py") if "mindport-logs" not in p.parts)
    by_name, by_shape, jit, helpers = (collections.Counter() for _ in range(4))
    sites = runtime_sites = importing = 0
    rows = []
    for path in files:
        fig = file_figures(path.read_text(encoding="utf-8"))
        rel = str(path.relative_to(out))
        for name, shape, line in fig["bindings"]:
            by_name[name] += 1
            by_shape[shape] += 1
            rows.append({"file": rel, "line": line, "torch": name, "shape": shape})
        jit.update(fig["jit"])
        helpers.update(fig["helpers"])
        sites += fig["sites"]
        runtime_sites += fig["runtime_sites"]
        importing += fig["imports"]
    return {"files": len(files), "importing": importing, "bindings": len(rows), "by_name": by_name,
            "by_shape": by_shape, "jit": jit, "sites": sites, "runtime_sites": runtime_sites, "helpers": helpers,
            "rows": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path, help="a converted tree (mindport convert ... -o OUT)")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--sites", help="print every binding of this shape (file:line torch name)")
    args = ap.parse_args(argv)
    fig = measure(args.out)
    print(f"files: {fig['files']} .py, {fig['importing']} import mindport")
    print(f"mp_adapt.api bindings: {fig['bindings']}")
    print(f"jit_ignore: {fig['jit']['jit_ignore']}  jit_is_scripting: {fig['jit']['jit_is_scripting']}")
    print(f"mindport.runtime sites: {fig['runtime_sites']} of {fig['sites']} sites")
    for title, counter in (("by shape", fig["by_shape"]), ("by torch name", fig["by_name"]),
                           ("runtime helpers", fig["helpers"])):
        print(f"\n{title}:")
        for key, n in counter.most_common(args.top):
            print(f"  {n:5d}  {key}")
    if args.sites:
        print(f"\nsites of shape {args.sites!r}:")
        for row in fig["rows"]:
            if row["shape"] == args.sites:
                print(f"  {row['file']}:{row['line']}  {row['torch']}")
    if args.json:
        args.json.write_text(json.dumps(fig, indent=1, default=dict))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
