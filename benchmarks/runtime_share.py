"""How native the ports are: the share of call sites that go through ``mindport.runtime``, over a corpus.

For each entry of a trials/wild manifest, its files are extracted from the fetched snapshot by the harness's own
``materialise`` (``/work/shared/wild/run.py``), converted with ``mindport.migrator.convert_path`` (one worker), and
the entry's converted files (the ones the manifest names; the harness's driver is left out) are read with ``ast``
(entries that name the same files of the same commit are converted once):

* a *site* is a call (``f(...)``), a decorator that is not a call (``@mp_math.jit_ignore``) or a base class;
* a site *goes through the runtime* when its callee is rooted in a name the file binds to ``mindport.runtime`` (or
  to ``mindport``): ``mp_nn.InplaceReLU(...)``, ``mp_adapt.api("torch.nn.Conv2d")(...)``, ``class A(mp_containers.
  ModuleList)``; the helper is named by its dotted callee (``mp_nn.InplaceReLU``), and a call of the value an
  ``mp_adapt.api(...)`` call returns counts once, as ``mp_adapt.api``;
* a port *imports mindport* when any of its converted files does.

Prints the share of sites through the runtime, the share of ports importing mindport, and the count per helper
(``--top``). ``--results RESULTS.json`` (the harness's output) keeps the entries that reached parity there;
``--json OUT`` writes the figures and the per-entry counts. ``--keep DIR`` keeps the converted trees.

``--facts`` measures the ports as ``mindport observe`` + ``convert --facts`` write them: each entry's torch original
is built and run once by the harness's own torch side (``case.py torch``, its constructor and inputs), under
:class:`mindport.observed.record`, and the entry is converted with what that run recorded (sites that saw only
floating inputs lose the int-to-float guard, joins of one dtype lose the promotion). An entry whose torch side fails
is converted without facts and counted so (``facts: false`` in its row).

Usage (from the project root; the snapshots fetched under /work/.mirror):
    PYTHONPATH=$PWD /work/main/.venv/bin/python benchmarks/runtime_share.py \
        --manifest benchmarks/trials/modern.json --mirrors /work/.mirror [--only ID,...] [--json OUT] [--top 40]
        [--device ascend] [--limit N] [--facts]

The set measured since session 30 (60 entries over 19 repositories, the first of modern.json whose snapshots were
fetched then; not filtered on parity): ``--only $(cat benchmarks/trials/runtime_share_ids.txt)``. On main b749d218: code-only
1577/16517 = 9.5 % of sites, 13/60 ports mindport-free; ``--facts`` 1500/16485 = 9.1 %, 20/60.
On native38 (cross-call dtype facts, native_facts.CallerFloats): code-only 1474/16535 = 8.9 % -> 1460/16527 = 8.8 %,
13/60 -> 13/60; ``--facts`` 1401/16505 = 8.5 % -> 1387/16497 = 8.4 %, 21/60 -> 21/60. The ceiling of parameter facts
(every parameter of every function taken as floating, unsound, measured once): 1423/16505 = 8.6 %, still 13/60.
On native40 (fresh random fills, legacy constructors of number data, filter/map lambdas over .parameters(), in-place
updates of unaliased locals; from b551797a): code-only 1460/16527 = 8.8 % -> 1418/16525 = 8.6 %, 13/60 -> 13/60;
``--facts`` 1387/16497 = 8.4 % -> 1345/16495 = 8.2 %, 21/60 -> 23/60 (vit/cait, vit/max_vit).
On native41 (F.pad's literal crops written as slicing and ops.pad, topk read for its indices alone, div/argmax/linspace
where the runtime would make MindSpore's own call, amax/amin of a non-integer input over a literal dim, max/min
against a *_like of the input, softmax inputs of zeros, cats, matrix-product operand sums and rebound own-method
parameters, float facts for softmax/gelu-like functions and layers and for matrix products; from abe8763c, where main
measured 1426/16521 and 1353/16491): code-only 1426/16521 = 8.6 % -> 1350/16530 = 8.2 %, 13/60 -> 13/60; ``--facts``
1353/16491 = 8.2 % -> 1276/16500 = 7.7 %, 23/60 -> 23/60.
On native42 (softmax inputs shifted by their own row maximum, of module-level functions of the file and of
nn.Sequential layers ending in a layer; sums absorbed by a broadcast with the reduced name, through ``.unsqueeze`` of the
reduced dim and ``torch.div``; float facts through every value reaching a read in a loop or branch, and through
attributes also assigned ``None``; unread class names dropped; ``a - b`` paddings under ``if a > b``; from 581da37e):
code-only 1350/16530 = 8.2 % -> 1320/16527 = 8.0 %, 13/60 -> 13/60; ``--facts`` 1276/16500 = 7.7 % -> 1250/16497 =
7.6 %, 23/60 -> 23/60.
On native45 (in-place Bernoulli fills of unaliased locals, Unfold beside an einops layer in a list extended into
nn.Sequential(*layers), paddings from parameters a layer took as a size; from 5d92b2c3, where the set measured
1331/16507 and 1261/16477): code-only 1331/16507 = 8.1 % -> 1328/16512 = 8.0 %, 13/60 -> 13/60; ``--facts`` 1261/16477
= 7.7 % -> 1259/16482 = 7.6 %, 23/60 -> 23/60 (mp_inplace.bernoulli_ 1 -> 0, mp_nn.Unfold 2 -> 1, both; mp_F.pad 28 ->
27 code-only, resnet20's, which --facts had already). What keeps the near-free ports (1..5 sites) importing mindport,
read from the --json rows: code-only, vit/levit, cvt and sep_vit have no site but load mindport.runtime.unbatched
(their stem convolution takes the model's input; cvt's and sep_vit's channel LayerNorm broadcasts an unbatched (C, H,
W) into a batch of one, so torch runs such an input); vit/vit, simple_vit, t2t a mean whose extent may be empty (the
patch count); cait, cross_vit, crossformer, ddim, regionvit a join whose members come through other calls (promoted);
max_vit, crossformer ``torch.tensor([2 * window_size - 1, 1])`` of a constructor argument; the six attentions ports a
masked softmax and tanh (MindSpore's float32 tanh kernel is off by 1e-4; its float64 one is torch's to 6e-8, but a
dtype fact and a device taking float64 would be needed) and, even without them, the unbatched handling of their three
Conv1d builds (CustomizingAttention's input is a caller's, viewed to rank 4 after); resnet20 a stepped slice
(MindSpore's CPU StridedSliceGrad defect); efficientnet_b0 the in-place div_/mul_ of drop_connect's parameter (the
caller's tensor; keep_ratio's type is the caller's). With --facts all of these are free but vit/vit and t2t (the mean
of a branch the recorded run did not take, pool='cls'), resnet20 (its slice), efficientnet_b0 (drop_connect does not
run in eval) and the attentions (tanh; Conv1d builds the entry did not run).
On native50 (joins of the outputs of a ModuleList the class builds once and fills only by ``self.NAME.append(Layer(
...))`` in its own methods, native_facts.appended_module_lists, and ``map(lambda conv: conv(x), self.convs)`` read as
its comprehension; from a2924edb, all 60 snapshots present): code-only 1344/16537 = 8.1 % -> 1343/16536 = 8.1 %, 13/60
-> 13/60; ``--facts`` 1275/16507 = 7.7 % -> 1275/16507 = 7.7 %, 23/60 -> 23/60 (crossformer's CrossEmbedLayer join,
which the observed run had already settled; wild parity and GRAPH_MODE kept). crossformer keeps mindport code-only
for ``torch.tensor([2 * window_size - 1, 1])`` alone: MindSpore's Tensor reads a 0-d tensor in the list as torch does
(int64, shape (2,)) but refuses a shape-(1,) one (TypeError), which torch reads as a scalar; whether the constructor
argument is a tensor is the caller's. MindSpore's float32 sigmoid is no way around tanh's kernel: ``2 * sigmoid(2x)
- 1`` is 1.6e-6 from float64 over [-20, 20] (torch 3.2e-8, mindport.runtime.math.tanh 1.5e-7, ops.tanh 1.0e-4).
On native51 (stepped basic reads of literal items on a name or a tensor as MindSpore's own subscripts: the bounds with
steps of 1, then each stepped axis swapped to the last place, stepped after ``...`` and swapped back, the forms
MindSpore 2.10's CPU kernels differentiate right, SliceGuardTransform._stepped_last; from e680d467): code-only
1343/16536 = 8.1 % -> 1342/16535 = 8.1 %, 13/60 -> 14/60; ``--facts`` 1275/16507 = 7.7 % -> 1274/16506 = 7.7 %,
23/60 -> 24/60 (resnet20, whose one site was ``mp_tensor.sliced`` of its option-A shortcut ``x[:, :, ::2, ::2]``;
wild parity and GRAPH_MODE kept; the runtime's sliced failed the GRAPH_MODE backward of the test's fixture,
StridedSliceGrad, since a graph gets the subscript as written: the native form passes it). Still open among the near-free: the attentions' tanh (``ops.sinh(c) /
ops.cosh(c)`` of ``c = ops.clamp(x, -10., 10.)`` is 1.4e-7 from float64 over [-20, 20], MindSpore's own ops, but
reads its input twice: the converter would have to bind it first), their masked softmax and Conv1d builds; the
cait/cross_vit joins ``torch.cat((x, context), 1)`` of a caller's ``context`` (an integer one torch promotes);
x_transformers' ``~causal_mask`` of ``self.create_causal_mask(...)``, an attribute bound to one of two module-level
functions both returning bool (BoolFacts reads neither the file's functions nor ``F.pad`` of a bool).
On native52 (a join's members derived from one tensor through integer-literal arithmetic, ``2 * q``, ``x ** 2``, ``norm``
and ``F.pad``, read through a plain binding of the same block, a branch's or a loop's (native_facts.block_binding), and
across rebindings of the name to a dtype-keeping form of it, ``k = F.pad(k, ...)``; from a6287a91): code-only
1342/16535 = 8.1 % -> 1334/16527 = 8.1 %, 14/60 -> 14/60; ``--facts`` 1274/16506 = 7.7 % -> 1266/16498 = 7.7 %, 24/60 ->
24/60 (mp_tensor.promoted 152 -> 144 code-only, 123 -> 115 with facts: x-transformers' l2-distance attention
``torch.cat((2 * q, q_norm_sq))`` under ``if self.l2_distance:``, a branch the recorded run does not take; only the
four x-transformers entries' output changed; their wild parity 4/4, GRAPH_MODE 4/4). The other promoted sites read at this point need a run-time decision or a
fact the code does not give: a caller's tensor joined to a computed one (cait/cross_vit ``context``, ddpm's
``x_self_cond``, glide's ``inpaint_image``, x-transformers' memories and cached keys), a rotary half joined to a half
promoted by ``freqs`` (``(t, t_unrotated)``), integer labels joined to a float fill (sam's ``padding_label``). Still
open: the attentions' tanh; a single-read form of MindSpore's own ops does not reach torch's precision
(``1 - 2 / (ops.exp(2 * x) + 1)`` is 1.6e-6 from float64 over [-20, 20] and 9.5e-7 at x = 1e-6, relative error 5 %);
nasnet's ``nn.Conv2d(..., **kwargs)`` (the runtime builder, since ``padding_mode`` may come in the keywords: every
construction of SeperableConv2d in the file passes none, nor does any of SeperableBranch, which hands its own
``**kwargs`` on to it: a two-level cross-call fact nothing reads yet).
On native53 (a ModuleList display of local names each bound only to a Cell construction and read nowhere else but
as the receiver of append/extend/insert, native_facts.named_cells; an Upsample/interpolate scale factor that is a
positive int by construction, ``2 ** i`` of a loop's count from zero, native_facts.loop_index and
table_calls._positive_int; from 2536e375): code-only 1334/16527 = 8.1 % -> 1332/16528 = 8.1 %, 14/60 -> 14/60;
``--facts`` 1266/16498 = 7.7 % -> 1264/16499 = 7.7 %, 24/60 -> 24/60 (segformer's ``stages.append(nn.ModuleList(
[get_overlap_patches, overlap_patch_embed, layers]))`` and decoder ``nn.Upsample(scale_factor = 2 ** i)``, both
settled; only segformer's output changed, in both modes; its wild parity 1/1 at 4.8e-7, GRAPH_MODE 1/1). segformer
keeps mindport for its one ``mp_nn.Unfold``: the Unfold is a local put in that display and called as the first
target of ``for (get_overlap_patches, overlap_embed, layers) in self.stages``, its output next read by
``rearrange(x, 'b c (h w) -> b c h w', ...)``, which refuses the 2-D result of an unbatched input, so torch runs it
on batches only; rules/unfold_layers.py proves that only for an Unfold followed by an einops layer in one
nn.Sequential. The near-free ports with facts are now vit/vit and t2t (a mean of the branch the recorded run does
not take), efficientnet_b0 (drop_connect's ``x.div_(keep_ratio)``/``x.mul_(mask)`` on its parameter: every call in
the file is ``out = drop_connect(out, self.drop_rate)`` of a fresh, unaliased ``out``, a cross-call fact
unaliased_local_update does not read, and ``div_`` keeps ``x``'s dtype where ``x / keep_ratio`` would need
``keep_ratio`` a Python number: the caller's ``self.drop_rate``), nasnet (the crop ``nn.ConstantPad2d((-1, 0, -1,
0))``, MindSpore's Cell wrong for a negative amount from its second call on; the ``**kwargs`` Conv2d builder),
segformer (its Unfold) and the six attentions (tanh).
On native54 (an nn.Unfold in ModuleList displays appended to ``self.NAME`` and run by ``for (t0, t1, ...) in
self.NAME:``, whose target for it is called once, its output next read by einops ``rearrange``/``reduce`` of a
three-axis pattern with only ``.shape`` read in between, rules/unfold_layers._looped_unfolds; an
``einops.layers.torch`` layer the file names nowhere dropped with its import, imports._drop_written_out_einops; from
f364496c): ``--facts`` 1264/16499 = 7.7 % -> 1263/16503 = 7.7 %, 24/60 -> 25/60 (segformer: its
``get_overlap_patches`` is Unfold1 of ``ops.unfold``, and its unused ``from einops.layers.torch import Rearrange``,
which the converter had moved to ``mindport.runtime.einops_layers``, goes; only segformer's output changed, code-only
too: 2/107 -> 1/111, still importing mindport for its ``torch.cat(fused, dim = 1)`` join; its wild parity 1/1 at
4.8e-7, GRAPH_MODE 1/1). Not settled, and why:
vit/vit's mean is not of a cls token plus patches under ``pool == 'mean'``: ``num_cls_tokens = 1 if pool == 'cls'
else 0``, so the mean's extent is the patch count alone, empty for ``image_size=0`` (which passes its divisibility
assert); t2t's one-token ``cls_token`` (``torch.randn(1, 1, dim)``) is joined before ``x = self.transformer(x)``,
and ``self.transformer`` is the caller's ``transformer`` when one is given, so nothing in the file bounds the
extent the mean reads. efficientnet_b0's drop_connect needs more than the cross-call unaliased fact: ``div_`` and
``mul_`` are not ``keeps_dtype`` in the tables (``x.div(k)`` promotes where ``x.div_(k)`` keeps ``x``'s dtype), so
even on an unaliased local the converter keeps ``mp_inplace.div_``/``mul_`` (``s = a * 2; s.mul_(m)`` does today):
``mul_(mask)`` of ``mask = torch.empty(..., dtype=x.dtype)`` keeps the dtype by construction, ``div_(keep_ratio)``
needs ``keep_ratio`` a Python number, the caller's ``self.drop_rate``. Met on the way: einops_patterns' bound form
``(lambda t, h: ...)(x, h_expr)`` (a keyword holding a call, ``h=int(sqrt(n)) // s``) returns None in GRAPH_MODE
inside a ``for`` loop of ``construct`` (MindSpore 2.10; outside a loop it compiles right): any lambda created in a
``for`` body does (rules/loop_lambdas.py writes it as a nested def since d6bb1b11).

Session 53's final tree (4fb784e2, every merge; ``--facts``, the 60 ids): **1269/16523 = 7.7 %, 24/60 importing no
mindport**. Against native54's 25/60, per port: disc56 made torch's functional pools take an unbatched input (one
table, mappings.unbatched.FUNCTIONS -> mindport.runtime.unbatched's form where the code does not show the input
batched); a recorded run's batched calls make them MindSpore's own again (observed decision ``batched``, MP108), but
ddim/model's ``F.avg_pool2d`` stands in Downsample's ``with_conv=False`` branch, which the run never takes (0 -> 1
site, no longer mindport-free), and video3d/resnext_a/b's ``avg_pool3d`` in the type-A shortcut function the run
never calls (+1 each); nanochat/gpt and dino's ``torch.cuda.set_device`` is now mapped (train54: was MP103, a site
left as torch's) to ``mp_framework.cuda_set_device`` (+1 each).
On native56 (session 54; from 9048aba0, which measured 1269/16523 = 7.7 %, 24/60 with ``--facts``): ``~`` of a mask
a module-level function of the file builds, called directly or as ``self.NAME(...)`` where ``__init__`` binds
``self.NAME`` to such functions (x-transformers' ``self.create_causal_mask = onnx_create_causal_mask if onnxable
else create_causal_mask``, both returning bool; a constant ``F.pad`` of a bool is bool), and ``~`` of a converted
``any``/``all`` (``~mask.any(dim = -1)``: the converted call is bool whatever its input), stay MindSpore's ``~``
(native_facts.BoolFacts, TensorIdiomTransform._converted_truth); ``x.bool()`` of a real tensor by construction is
``x.astype(ms.bool_)``, and a cast to a real dtype (``.long()``, ``.float()``) is real whatever its receiver
(RealFacts._REAL_CASTS; NCRF++'s CRF ``mask = (1 - mask.long()).bool()`` of a forward parameter). ``--facts``:
1269/16523 = 7.7 % -> 1245/16503 = 7.5 %, 24/60 -> 24/60 (mp_math.bitwise_not 28 -> 8: 7 -> 2 in each x-transformers
entry; mp_tensor.bool_ 12 -> 8: 2 -> 0 in each ncrfpp entry; only those six entries' output changed; x-transformers'
wild parity 4/4 and GRAPH_MODE 4/4; ncrfpp's parity 2/2, GRAPH_MODE 0/2 as before: lstm_crf's IndexError of the
CRF's advanced ``enumerate`` iterator (trials README, graph55) and cnn_softmax's "'Tuple' object has no attribute
'ndim'" of an empty list input, the same error on 9048aba0). The rest of x-transformers' top helpers, read per site, need a fact the code
does not give or a decision at run time: the two ``~`` left are of ``forward`` parameters (``~input_mask``,
``~attn_mask``); ``mp_framework.finfo`` (7 a port) reads ``torch.finfo(t.dtype)`` of a tensor whose dtype only the
run knows (MindSpore has no finfo; the observed run reaches 2 of the 7, float32, but a literal would be silently
wrong for a half-precision run, not loudly); ``mp_F.softmax`` (7) is of parameters (the sampling filters' logits,
``sparse_topk_attn``'s) or of the ``partial(F.softmax, dim=-1)`` wrapper, whose one observed ``unmasked`` fact is at
the call ``self.attn_fn(sim)``, not at the wrapper's body; ``mp_einops.pack``/``unpack`` (7 + 7) have literal
patterns (``'b * d'``) but a native form is a reshape and cat per member plus the packed shapes, statements rather
than an expression, and unpack's split sizes are products of run-time shapes; ``mp_tensor.promoted`` (13) joins
memories, cached keys and caller embeddings; ``mp_math.sum``/``any`` (5 + 5) reduce ``mask`` parameters over
extents that may be empty; ``mp_F.pad`` (4) pads by ``j - i``, a parameter or an attribute, not non-negative by
construction; ``mp_tensor.device`` (5) is three ``device`` properties' returns and two reads in Attend whose
``device`` goes on to the file's ``create_causal_mask(..., device = device)`` (DeviceTransform drops only a device
no converted line reads).

On native55 (session 54; file-local native bodies, mappings/data/local/bodies.toml: ``mp_math.tanh`` of an input
floating by the facts is ``_precise_tanh``, MindSpore's expm1/where written once into the file; a recorded run's
rank of each call's input per class of the project, ``input:<class>:<rank>``, settles a pool on a forward's own
argument in a branch the run never takes; a Conv1d output swapped with an axis its unbatched form lacks shows the
layer batched; from 9048aba0): ``--facts`` 1269/16523 = 7.7 % -> 1231/16557 = 7.4 %, 24/60 -> 25/60 (ddim/model's
Downsample ``F.avg_pool2d`` is ``ops.avg_pool2d``: the run saw every Downsample call on a 4-D input; with those facts
both Downsample branches match torch in PyNative and GRAPH_MODE, 2.8e-6. The six attentions 4 -> 0 sites each,
x-transformers' four 134 -> 132, nanochat 111 -> 110, ncrfpp's two 73 -> 71: tanh of layer outputs; the site count
grows by each written body's own two calls, ops.expm1 and ops.where; wild parity of those 13 kept, GRAPH_MODE as
before: ncrfpp's two fail there on the unchanged base too). The six attentions still import mindport with no
runtime call left: ``import mindport.runtime.unbatched`` for CustomizingAttention's ``conv_feat =
self.conv1d(last_attn.unsqueeze(1))`` (next reshaped by ``view(batch_size, self.num_heads, -1, v_len)``, which any
rank passes; its input the method's parameter), a class no entry's run calls; the six entries share one conversion
made with the first entry's facts. What would settle it: a file-local batch-adding subclass of the layer (the
runtime's ``_layer(rank)`` construct, written into the file for the builds not shown batched) in place of the
import. Still open among the near-free: vit/vit and t2t's ``mp_math.mean`` (native54's reasons stand),
efficientnet_b0's ``div_``/``mul_`` on drop_connect's parameter (a cross-call unaliased fact plus ``div_``'s kept
dtype: ``(x / k).astype(x.dtype)`` would be torch's meaning wherever torch accepts ``k``), nasnet's three.
On native57 (session 54; from 3a7f7ef9) an in-place update of a module-level function's parameter whose every caller
in the file gives its tensor up (``v = f(v, ...)``, ``v`` bound on every path by a new tensor no other name holds:
native_facts.owned_parameters) rebinds the parameter to the out-of-place result cast back to its dtype, and any
in-place entry without ``keeps_dtype`` takes that cast in TableCallTransform._unaliased_update: efficientnet_b0's
drop_connect is ``x = ops.div(x, other=keep_ratio).astype(x.dtype)``, ``x = x.mul(mask).astype(x.dtype)``, ``--facts``
``--only cifar/efficientnet_b0`` 2/80 -> 0/82 sites, mindport-free (wild parity rel 0.0 and GRAPH_MODE 1/1 before
and after). A function another file of the project imports by name is refused (its callers there are unseen).
Session 54's tree after native55-57, graph56/57, disc57, train55, proof56 (lead54 02df360f), ``--facts`` over the 60:
**1204/16550 = 7.3 %, 26/60 importing no mindport** (from 1269/16523 = 7.7 %, 24/60).
"""
from __future__ import annotations

import argparse
import ast
import collections
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HARNESS = Path("/work/shared/wild/run.py")


def _harness(path: Path):
    spec = importlib.util.spec_from_file_location("_wild_run", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _runtime_names(tree: ast.Module) -> set[str]:
    """Names the file binds to mindport or its runtime."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "mindport":
                    names.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "mindport" and not node.level:
            names.update(a.asname or a.name for a in node.names)
    return names


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    if isinstance(node, ast.Call):  # mp_adapt.api("torch.nn.X")(...): the inner call is the site
        return None
    return None


def file_sites(code: str) -> tuple[int, collections.Counter, bool]:
    """(number of sites, runtime helper -> count, imports mindport) of one converted file."""
    tree = ast.parse(code)
    runtime = _runtime_names(tree)
    total, helpers = 0, collections.Counter()

    def site(callee: ast.AST) -> None:
        nonlocal total
        total += 1
        name = _dotted(callee)
        if name and name.split(".")[0] in runtime:
            helpers[name] += 1

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Call):  # the adapter's returned callable: counted at the inner call
                continue
            site(node.func)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for dec in node.decorator_list:
                if not isinstance(dec, ast.Call):
                    site(dec)
            if isinstance(node, ast.ClassDef):
                for base in node.bases:
                    site(base)
    return total, helpers, bool(runtime)


_RECORD = """
import json, sys
sys.path.insert(0, {case_dir!r})
import case
from mindport.observed import record
entry = json.load(open({entry_json!r}))
with record({src!r}) as facts:
    case.torch_side(entry, {wid!r})
facts.save({out!r})
"""


def observe_entry(entry: dict, harness_path: Path, src: Path, wid: Path) -> Path | None:
    """Run the entry's torch side once under the recorder; the facts file, or None when the torch side failed."""
    import subprocess

    entry_json, out = wid / "entry.json", wid / "facts.json"
    entry_json.write_text(json.dumps(entry))
    code = _RECORD.format(case_dir=str(harness_path.parent), entry_json=str(entry_json), src=str(src),
                          wid=str(wid), out=str(out))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(x for x in [str(ROOT), os.environ.get("PYTHONPATH", "")] if x))
    try:
        r = subprocess.run([sys.executable, "-c", code], cwd=wid, env=env, capture_output=True, text=True,
                           timeout=600)
    except subprocess.TimeoutExpired:
        return None
    return out if r.returncode == 0 and out.is_file() else None


def measure_entry(entry: dict, harness, mirrors: str, work: Path, device: str = "any",
                  harness_path: Path | None = None) -> dict:
    from mindport.migrator import convert_path

    gd = harness.gitdir(mirrors, entry["repo"])
    if gd is None:
        return {"id": entry["id"], "error": f"no snapshot of {entry['repo']}"}
    wid = work / entry["id"].replace("/", "__")
    src, conv = wid / "src", wid / "conv"
    harness.materialise(entry, gd, str(src))
    facts = None
    if harness_path is not None:
        from mindport.observed import load

        recorded = observe_entry(entry, harness_path, src, wid)
        facts = load(recorded) if recorded else None
    # no time limit: a file over convert's per-file limit would be copied unchanged and its torch calls counted as
    # native sites (a figure that depended on the machine's load)
    report = convert_path(src, conv, jobs=1, force=True, use_cache=False, device=device, facts=facts, timeout=None)
    failed = sorted({d.file for d in report.diagnostics if d.code == "MP299"})
    root = entry.get("import_root", ".")
    total, helpers, imports = 0, collections.Counter(), False
    for rel in entry["files"]:
        path = conv / rel
        if not path.is_file() or not rel.endswith(".py"):
            continue
        try:
            n, h, imp = file_sites(path.read_text(encoding="utf-8"))
        except SyntaxError:
            continue
        total += n
        helpers.update(h)
        imports |= imp
    del root
    row = {"id": entry["id"], "sites": total, "runtime_sites": sum(helpers.values()), "imports_mindport": imports,
           "helpers": dict(helpers)}
    if harness_path is not None:
        row["facts"] = facts is not None
    if failed:  # copied unchanged: the entry's figures are not a conversion's
        row = {"id": entry["id"], "error": f"not converted: {', '.join(failed)} (MP299)"}
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--manifest", default=str(ROOT / "benchmarks" / "trials" / "modern.json"))
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--harness", default=str(HARNESS))
    ap.add_argument("--only", default="")
    ap.add_argument("--results", default="", help="the harness's results.json: keep the entries at parity there")
    ap.add_argument("--keep", default="", help="keep the converted trees in this folder")
    ap.add_argument("--json", default="")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--device", default="any", choices=("any", "cpu", "gpu", "ascend"),
                    help="convert for this device (convert --device): gpu/ascend drop the CPU kernel guards")
    ap.add_argument("--limit", type=int, default=0, help="only the first N distinct conversions (a quick sample)")
    ap.add_argument("--facts", action="store_true",
                    help="run each entry's torch original once under the recorder and convert with its facts "
                         "(mindport observe + convert --facts)")
    a = ap.parse_args(argv)
    harness = _harness(Path(a.harness))
    entries = json.load(open(a.manifest))
    if a.only:
        ids = set(a.only.split(","))
        entries = [e for e in entries if e["id"] in ids]
    if a.results:
        proven = {r["id"] for r in json.load(open(a.results)) if r.get("parity")}
        entries = [e for e in entries if e["id"] in proven]
    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="mp-runtime-share-"))
    rows, done = [], {}
    for e in entries:
        # entries that differ only in their constructor convert the same files the same way: converted once
        key = json.dumps([e["repo"], e["commit"], e["files"], e.get("prep"), e.get("keep"), e.get("inject"),
                          e.get("import_root"), e.get("module")], sort_keys=True)
        if key in done:
            rows.append(dict(done[key], id=e["id"]))
            continue
        if a.limit and len(done) >= a.limit:
            continue
        try:
            row = done[key] = measure_entry(e, harness, a.mirrors, work, a.device,
                                            Path(a.harness) if a.facts else None)
        except Exception as exc:  # noqa: BLE001 -- one entry's failure is reported, the others are measured
            row = {"id": e["id"], "error": f"{type(exc).__name__}: {exc}"}
        rows.append(row)
        if "error" in row:
            print(f"{row['id']}: {row['error']}", file=sys.stderr)
    ok = [r for r in rows if "error" not in r]
    sites = sum(r["sites"] for r in ok)
    through = sum(r["runtime_sites"] for r in ok)
    importing = sum(r["imports_mindport"] for r in ok)
    helpers = collections.Counter()
    for r in ok:
        helpers.update(r["helpers"])
    print(f"ports measured: {len(ok)} of {len(entries)}")
    if a.facts:
        print(f"converted with observed facts: {sum(bool(r.get('facts')) for r in ok)}/{len(ok)}")
    print(f"call sites through mindport.runtime: {through}/{sites} = {100 * through / max(sites, 1):.1f} %")
    print(f"ports importing mindport: {importing}/{len(ok)} = {100 * importing / max(len(ok), 1):.1f} %")
    print(f"ports importing no mindport: {len(ok) - importing}/{len(ok)}")
    print("sites per runtime helper:")
    for name, count in helpers.most_common(a.top):
        ports = sum(1 for r in ok if name in r["helpers"])
        print(f"  {count:5d}  {name}  ({ports} ports)")
    if a.json:
        Path(a.json).write_text(json.dumps({"sites": sites, "runtime_sites": through, "ports": len(ok),
                                            "ports_importing": importing, "helpers": dict(helpers),
                                            "entries": rows}, indent=1))
    if not a.keep:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
