"""The converter's rules, one file each, in the order they run (written here and nowhere else).

Each rule is a class with LibCST-style hooks, a docstring that says what it does and why, and ``EXAMPLES`` (torch
source -> converted source, and sources it leaves alone) that the test suite runs through the whole converter and
``docs/converter/`` shows. For one node, the first rule (in this order) that returns a different node wins.
"""
from __future__ import annotations

from mindport.migrator.rules.autograd_function import AutogradFunctionTransform
from mindport.migrator.rules.branch_bindings import BranchBindingTransform
from mindport.migrator.rules.buffers import BufferTransform
from mindport.migrator.rules.comment_indent import CommentIndentTransform
from mindport.migrator.rules.comprehension_fors import ComprehensionForsTransform
from mindport.migrator.rules.custom_optimizer import CustomOptimizerTransform
from mindport.migrator.rules.data_pipeline import DataPipelineTransform
from mindport.migrator.rules.device import DeviceTransform
from mindport.migrator.rules.dict_unpack import DictUnpackTransform
from mindport.migrator.rules.display_statements import DisplayStatementTransform
from mindport.migrator.rules.dict_update import DictUpdateTransform
from mindport.migrator.rules.distributed import DistributedTransform
from mindport.migrator.rules.einops_calls import EinopsPatternTransform
from mindport.migrator.rules.unfold_layers import UnfoldLayerTransform
from mindport.migrator.rules.exact_types import ExactTypeTestTransform
from mindport.migrator.rules.callable_tests import CallableTestTransform
from mindport.migrator.rules.math_calls import MathCallTransform
from mindport.migrator.rules.numpy_scalars import NumpyScalarTransform
from mindport.migrator.rules.format_specs import FormatSpecTransform
from mindport.migrator.rules.function_keys import FunctionKeyedDictTransform
from mindport.migrator.rules.indexing import IndexTransform
from mindport.migrator.rules.slice_guards import SliceGuardTransform
from mindport.migrator.rules.init_calls import InitTransform
from mindport.migrator.rules.jit_markers import JitMarkerTransform
from mindport.migrator.rules.layer_parameters import LayerParameterNameTransform
from mindport.migrator.rules.layer_writes import LayerWriteTransform
from mindport.migrator.rules.legacy_names import LegacyNameTransform
from mindport.migrator.rules.lightning_members import LightningMemberTransform
from mindport.migrator.rules.lambda_values import LambdaValueTransform
from mindport.migrator.rules.list_extend import ListExtendTransform
from mindport.migrator.rules.local_del import LocalDelTransform
from mindport.migrator.rules.loop_else import LoopElseTransform
from mindport.migrator.rules.loop_lambdas import LoopLambdaTransform
from mindport.migrator.rules.match_statements import MatchStatementTransform
from mindport.migrator.rules.list_pop import ListPopTransform
from mindport.migrator.rules.iter_next import IterNextTransform
from mindport.migrator.rules.list_sort import ListSortTransform
from mindport.migrator.rules.inert_contexts import InertContextTransform
from mindport.migrator.rules.namedtuple_dict import NamedTupleDictTransform
from mindport.migrator.rules.self_cache import SelfCacheTransform
from mindport.migrator.rules.set_keys import SetKeysTransform
from mindport.migrator.rules.shadowed_globals import ShadowedGlobalTransform
from mindport.migrator.rules.locals_dict import LocalsDictTransform
from mindport.migrator.rules.size_tuples import SizeTupleTransform
from mindport.migrator.rules.packed_fields import PackedFieldTransform
from mindport.migrator.rules.graph_containers import GraphContainerTransform
from mindport.migrator.rules.sub_cell_arguments import SubCellArgumentTransform
from mindport.migrator.rules.map_lambda import MapLambdaTransform
from mindport.migrator.rules.module_class import ModuleClassTransform
from mindport.migrator.rules.module_methods import ModuleMethodTransform
from mindport.migrator.rules.module_statements import ModuleStatementTransform
from mindport.migrator.rules.namespace_lists import NamespaceListTransform
from mindport.migrator.rules.object_surface import ObjectSurfaceTransform
from mindport.migrator.rules.parameter_containers import ContainerTransform
from mindport.migrator.rules.partial_attributes import PartialAttributeTransform
from mindport.migrator.rules.partial_calls import PartialCallTransform
from mindport.migrator.rules.python_round import RoundIntTransform
from mindport.migrator.rules.raise_not_implemented import RaiseNotImplementedTransform
from mindport.migrator.rules.record_dicts import RecordDictTransform
from mindport.migrator.rules.recorded_values import RecordedValueTransform
from mindport.migrator.rules.references import ReferenceTransform
from mindport.migrator.rules.repr_unset import ReprUnsetTransform
from mindport.migrator.rules.reversed_cells import ReversedCellsTransform
from mindport.migrator.rules.value_lists import ValueListSizeTransform
from mindport.migrator.rules.repeated_joins import RepeatedJoinTransform
from mindport.migrator.rules.reversed_tensor import ReversedTensorTransform
from mindport.migrator.rules.table_calls import TableCallTransform
from mindport.migrator.rules.layer_init_calls import LayerInitCallTransform
from mindport.migrator.rules.tensor_idioms import TensorIdiomTransform
from mindport.migrator.rules.training_loop import TrainingLoopRule
from mindport.migrator.rules.truth_tests import XorTestTransform
from mindport.migrator.rules.try_reraise import TryReraiseTransform
from mindport.migrator.rules.unbound_fallbacks import UnboundFallbackTransform
from mindport.migrator.rules.unbound_names import UnboundNameTransform
from mindport.migrator.rules.zip_strict import ZipStrictTransform
from mindport.migrator.rules.aug_rebind import AugAssignRebindTransform
from mindport.migrator.rules.alias_updates import AliasUpdateTransform
from mindport.migrator.rules.view_writes import ViewWriteBackTransform
from mindport.migrator.rules.argument_writes import ArgumentWriteTransform
from mindport.migrator.rules.onednn_cap import OneDnnCapTransform

RULES = (
    ModuleClassTransform,         # nn.Module -> nn.Cell, forward -> construct
    LightningMemberTransform,     # self.manual_backward(loss) in a LightningModule: MP106 (the base: mp_lightning)
    LegacyNameTransform,          # collections.Sequence, np.float, scipy.signal.hann -> the current names (same objects)
    RecordDictTransform,          # a @dataclass record built in forward -> a dict display, inter.f -> inter["f"] (GRAPH_MODE)
    CustomOptimizerTransform,     # Optimizer subclasses: step(self) reading p.grad -> construct(self, grads)
    AutogradFunctionTransform,    # autograd.Function -> Cell with construct/bprop; F.apply -> F()
    LayerParameterNameTransform,  # self.emb.weight -> self.emb.embedding_table (tied weights)
    LayerWriteTransform,          # m.eps = 1e-3 after construction -> mp_adapt.set_layer_attribute (baked settings)
    JitMarkerTransform,           # @torch.jit.* markers dropped, torch.jit.is_scripting() -> False, tests folded
    ReferenceTransform,           # isinstance(m, nn.Conv2d), act = F.relu: class/function names only
    ObjectSurfaceTransform,       # Base.__init__(self, ...), x.requires_grad, m._modules, with x.device:
    InitTransform,                # nn.init.*_(t, ...) -> t.set_data(initializer(...))
    ContainerTransform,           # ParameterList/ParameterDict -> mindport.runtime.containers
    NamespaceListTransform,       # an empty ModuleList filled by add_module and read by name -> nn.Cell()
    ModuleStatementTransform,     # model.requires_grad_(False) statements
    BufferTransform,              # register_buffer -> non-trainable Parameter
    TensorIdiomTransform,         # .numpy(), .size(), no_grad blocks (before device moves vanish)
    RepeatedJoinTransform,        # torch.cat([t] * n, dim=0) -> ops.tile(t, (n,) + (1,) * (t.ndim - 1)) (GRAPH_MODE unrolls lists)
    ReversedTensorTransform,      # reversed(torch.stack(xs)) -> torch.stack(xs).flip(0) (torch's Tensor.__reversed__)
    IndexTransform,               # x[mask, :] -> x[mask] (MindSpore misreads a 2-d mask with more elements)
    DistributedTransform,         # torchrun's LOCAL_RANK/RANK env reads, DDP's .module (DDP itself: the table)
    DeviceTransform,              # .to(device), .cuda(), torch.device, DataParallel
    ModuleMethodTransform,        # eval()/train(), parameters(), state_dict() ...
    DataPipelineTransform,        # TensorDataset/DataLoader/Dataset bases -> GeneratorDataset + batch
    TrainingLoopRule,             # zero_grad/backward/step loops -> forward_fn + value_and_grad + opt(grads)
    RecordedValueTransform,       # values collected over an episode for a later backward: recorded, computed again
    UnfoldLayerTransform,         # nn.Unfold before an einops layer taking 3 axes -> a Cell calling ops.unfold
    EinopsPatternTransform,       # einops.rearrange/reduce/repeat, literal pattern -> reshape/transpose/...
    SizeTupleTransform,           # torch.Size(s) in a model method reading no numel()/isinstance -> tuple(s) (GRAPH_MODE)
    PackedFieldTransform,         # packed.data in a model method -> packed[0]; PackedSequence(...) -> packed_sequence
    InertContextTransform,        # with sdpa_kernel(b): / autocast / nullcontext in a model method -> its body (GRAPH_MODE)
    NumpyScalarTransform,         # np.ceil(np.log(n)).astype('int').item() in a model method -> int(...) (GRAPH_MODE)
    TableCallTransform,           # every other torch API through the mapping tables; flags the rest
    LayerInitCallTransform,       # a layer subclass's reset_parameters: called after the base __init__, as torch's does
    DisplayStatementTransform,    # row.append(i), col.append(j) / f(x) if c else None in a model method -> statements (GRAPH_MODE drops them)
    UnboundFallbackTransform,     # try: s = s[...] / except: s = 0 (s unbound at first) -> s = None; if s is None (GRAPH_MODE)
    BranchBindingTransform,       # names bound on one branch of an if in a model method: bound first (GRAPH_MODE)
    UnboundNameTransform,         # a model method's line reading a name nothing binds -> raise NameError (GRAPH_MODE)
    MapLambdaTransform,           # map(lambda t: ..., xs) consumed at once -> [... for t in xs] (GRAPH_MODE)
    DictUnpackTransform,          # {**a, **b} in a function -> merged_dict(a, b) (GRAPH_MODE reads ** wrong)
    SubCellArgumentTransform,     # blk.H = H before blk(x) -> blk(x, _mp_H=H), its construct reads _mp_H (GRAPH_MODE)
    GraphContainerTransform,      # dict(d) in a model method -> dict_copy(d); m = l then m.append: MP107 (GRAPH_MODE)
    FunctionKeyedDictTransform,   # D[self.h] of a module-level dict keyed by functions -> its keys/values tuples (GRAPH_MODE)
    ReversedCellsTransform,       # for up in reversed(self.up) -> list(self.up)[::-1] (GRAPH_MODE)
    ListPopTransform,             # skips.pop() in a model method -> skips[-1]; skips = skips[:-1] (GRAPH_MODE)
    IterNextTransform,            # it = iter(xs); next(it, d) in a model method -> xs and an index (GRAPH_MODE)
    ListExtendTransform,          # xs.extend(ys) in a model method -> xs = xs + list(ys) (GRAPH_MODE unpacks wrong)
    ListSortTransform,            # xs.sort() / xs.remove(v) in a model method -> xs = sorted(xs) / slices (GRAPH_MODE no-op)
    SetKeysTransform,             # set(d) in a model method -> set(tuple(d)) (GRAPH_MODE's set read a dict's values)
    LocalsDictTransform,          # locals() in a model method -> {"name": name, ...} bound by then (GRAPH_MODE: {})
    SelfCacheTransform,           # self.x written in one model method, read in another -> returned/passed (GRAPH_MODE)
    ArgumentWriteTransform,       # a helper's h[i] = v into its caller's tensor -> return h; h = helper(h) (GRAPH_MODE)
    ComprehensionForsTransform,   # [f(a, b) for a in xs for b in ys] -> mp_graph_safe.joined([[...] for a in xs]) (GRAPH_MODE)
    TryReraiseTransform,          # try: body / except E as e: print(...); raise e -> body (GRAPH_MODE has no try)
    LoopElseTransform,            # for/while ... else in a model method -> a no-break flag and if (GRAPH_MODE refuses)
    LoopLambdaTransform,          # for ...: x = (lambda t: ...)(x) in a model method -> a nested def (GRAPH_MODE gives None)
    MatchStatementTransform,      # match mode: case 'a': ... in a model method or function -> if/elif/else (GRAPH_MODE has no match)
    LocalDelTransform,            # del query, key in a model method -> dropped (GRAPH_MODE has no del)
    LambdaValueTransform,         # G(act=lambda x: x) while building -> _mp_lambda = lambda x: x first (GRAPH_MODE)
    ShadowedGlobalTransform,      # def f(self): return f(...) (the module's f) -> _mp_f(...), _mp_f = f (GRAPH_MODE)
    PartialCallTransform,         # k = partial(f, a=1); k(x) -> f(x, a=1) (GRAPH_MODE merges such calls)
    PartialAttributeTransform,    # self.k = partial(f, a=a) only called -> lambda *args: f(*args, a=a) (GRAPH_MODE)
    DictUpdateTransform,          # kwargs.update(k=v) in a model method -> kwargs['k'] = v (GRAPH_MODE)
    ReprUnsetTransform,           # __repr__ reading self.x its class never sets -> falls back (GRAPH_MODE calls it)
    RaiseNotImplementedTransform,  # raise NotImplemented -> raise NotImplementedError
    XorTestTransform,             # assert not (a ^ b) -> assert not (a != b) (GRAPH_MODE's BitXor takes ints only)
    ExactTypeTestTransform,       # type(x) is tuple in a model method -> isinstance(x, tuple) and ... (GRAPH_MODE folds)
    MathCallTransform,            # math.sqrt(n) in a model method -> mp_graph_safe.math_call(math.sqrt, n) (GRAPH_MODE)
    CallableTestTransform,        # d() if isfunction(d) else d -> mp_graph_safe.callable_test(isfunction, d) (GRAPH_MODE)
    NamedTupleDictTransform,      # config._asdict() in a model method -> dict(zip(config._fields, config)) (GRAPH_MODE)
    ValueListSizeTransform,       # max(lengths.tolist()) as a size in a model method -> said, MP107 (GRAPH_MODE: no values)
    ZipStrictTransform,           # zip(a, b, strict=False) in a model method -> zip(a, b) (GRAPH_MODE's zip: no strict)
    AugAssignRebindTransform,     # x += e before x[...] += m in a model method -> x = x + e (GRAPH_MODE lost the item write)
    ViewWriteBackTransform,       # v = y[0]; v += 1 -> then y = mp_inplace.view_update(y, steps, v) (torch's views share)
    AliasUpdateTransform,         # r = h; h += 1 -> then r = h again (MindSpore's += and graph item writes rebind h only)
    RoundIntTransform,            # round(c * 0.5) of a size -> int(round(...)) (GRAPH_MODE's round gives a float)
    CommentIndentTransform,       # a comment left of a function's body -> indented to it (GRAPH_MODE parses methods)
    FormatSpecTransform,          # f"{loss:.4f}", "{:.6f}".format(loss) -> mp_tensor.formattable(loss) (0-d tensors)
    SliceGuardTransform,          # x[..., ::2, ::2], p[i, :yi] read -> mp_tensor.sliced (CPU slice backward faults)
    OneDnnCapTransform,           # a program: os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2") (CPU convolutions 40-130x)
)


_TAKE_MODULE_CLASSES = (ModuleClassTransform, BranchBindingTransform, UnboundNameTransform, ListPopTransform, IterNextTransform,
                        ListExtendTransform,
                        ListSortTransform, SetKeysTransform, LocalsDictTransform, SizeTupleTransform,
                        PackedFieldTransform, GraphContainerTransform, FunctionKeyedDictTransform, SubCellArgumentTransform,
                        ComprehensionForsTransform, TryReraiseTransform, UnboundFallbackTransform, DisplayStatementTransform, PartialAttributeTransform, LocalDelTransform,
                        LoopElseTransform, LoopLambdaTransform, MatchStatementTransform, SelfCacheTransform, ExactTypeTestTransform, ZipStrictTransform,
                        InertContextTransform, NamedTupleDictTransform,
                        AugAssignRebindTransform,
                        DictUpdateTransform, ModuleMethodTransform, LambdaValueTransform, ShadowedGlobalTransform,
                        MathCallTransform, NumpyScalarTransform, RaiseNotImplementedTransform, ValueListSizeTransform)  # they act in model classes


def make_rules(ctx, module_classes: set[str], without: tuple[type, ...] = ()) -> list:
    """One instance of each rule for one file, in order (``without``: rules left out, for the examples' tests)."""
    return [rule(ctx, module_classes) if rule in _TAKE_MODULE_CLASSES else rule(ctx)
            for rule in RULES if rule not in without]
