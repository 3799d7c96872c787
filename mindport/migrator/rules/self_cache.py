"""The converter rule SelfCacheTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/self_cache.md shows both."""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.rules.buffers import kept_buffer_names
from mindport.migrator.syntax import last_name, with_none_keywords
from mindport.migrator.walk import parse_expression, parse_statement, transform, walk

_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_ENTRIES = ("forward", "construct")


class SelfCacheTransform(Rule):
    """A value a model method caches on ``self`` for another method to read (``self.feat = self.encoder(x)`` in
    ``gen_feat``, read by ``query_rgb``) is passed along explicitly: the helper method that writes it returns it and
    its caller binds it (``self.feat = self.gen_feat(x)``), and a helper method that reads a value another method
    wrote gets it as a keyword argument (``self.query_rgb(coord, _mp_feat=self.feat)``).

    MindSpore's static graph (GRAPH_MODE, ``@jit``) compiles a ``self.x = v`` write and a read of it in the same
    method, but a write is not seen by another method: the reader gets what ``__init__`` set (``None``: "unsupported
    operand type(s)") or "ClassMember ... has no attribute" (learning3d's PCN, LIIF, C-SWM, the neural Hawkes LSTMs).
    Within a method, a value written to ``self.x`` is also bound to a local ``_mp_x``, and the reads that follow a
    write on every path read the local: a graph reads a write back as a variable (a size written to ``self.n`` and
    read back is no longer a constant, and ``repeat(1, self.n)`` or a join after it fails to compile), while the
    local keeps what was written. Each method still writes ``self.x`` as before, so PyNative and code reading the
    attribute afterwards are unchanged: in PyNative the argument holds the very value ``self.x`` holds, and a helper
    called without it (from another file, in PyNative) reads ``self.x``. No local is kept for an attribute the
    method also writes with ``+=``, in a nested function, or through a method that is not threaded.

    A helper is threaded only when no other class of the file defines a method of its name (an override would not
    take the new arguments) and every reference to it in the file is a call ``self.helper(...)`` inside its class,
    written as a statement of its own, as the value of a one-target assignment, or as a ``return`` value (the call
    site is rewritten). The values passed in are those the helper (or a helper it calls) reads before it writes them;
    the values returned are those it writes, (a write under an ``if`` also passes the old value in). A helper that
    returned a value returns a tuple ``(value, self.a, ...)`` and the caller unpacks it. A public helper (no leading
    underscore) whose return changes is threaded as ``_mp_<name>``, which the class's own calls call, and keeps its
    name, signature and return for every other caller (``model.encode(x)`` in a training script): it calls
    ``_mp_<name>`` and gives what the method gave.

    What cannot be threaded keeps its torch meaning and gets MP107 (a warning, and the statement's comment), because
    GRAPH_MODE would read a different value without an error:

    * a value ``forward`` reads before writing it, which PyNative takes from the previous call (state kept across
      calls, a cache such as ``if self.edge_list is None``): a graph reads what ``__init__`` set;
    * a value ``forward`` (or a helper it calls) writes for another public method or for code outside the class
      (``model.output`` read after the call): a graph does not write it back;
    * a value read by a method the rule does not thread (called outside its class, or called inside an expression).

    A sub-Cell that keeps state on ``self`` from one call to the next, which one parent calls more than once in its
    ``forward`` (SegRNN's RevIN: ``x = self.revin(x, 'norm')`` stores the statistics, ``y = self.revin(y, 'denorm')``
    reads them; ``mindport.migrator.project.held_cells`` finds such pairs across the project's files): a graph does not
    carry the first call's ``self.x`` write to the second (it read what ``__init__`` set: ``mul(None)``). Its
    ``construct`` is threaded as ``_mp_construct(..., _mp_state=None)``, which unpacks the state it is handed (what
    it reads before writing and what it writes, in one order; None: its own attributes, what PyNative's previous call
    left) and returns ``(value, *state)``; ``construct`` keeps its signature and return for every other caller. The
    parent calls it through ``mp_framework.held_call(self.revin, x, 'norm', _mp_state=_mp_revin_state)``, which gives
    ``(value, state)`` (a class with no ``_mp_construct`` is called as it is), and binds the state for the next call;
    the call is made first on its line and its value read where it stood. A call under a condition of its line
    (``and``/``or``, ``a if c else b``), in a lambda, a comprehension or a compound statement's header, or beside
    another such call on its line, is said (MP107). A state read by the parent's first call still takes what
    ``__init__`` set in a graph: said when ``__init__`` sets it (when it does not, the graph reads None and fails).

    A ``@property`` or a ``forward`` that builds a cache on first use or rebuilds it when a size changes (an ``if``
    testing ``self.x`` that writes ``self.x = v``: ``if self._freqs is None``, Mistral's ``freqs_cis`` property,
    lit-llama's ``rope_cache``/``mask_cache``; ``if self.grid.shape[2:4] != x.shape[2:4]``, YOLOv3's grid) reads the
    attribute (and every other one the ``if`` writes beside it: ``self.rope_cos = cos`` under ``if self.rope_sin is
    None``) once at the top of the method into a local ``_mp_<name>``, builds the local, keeps it on self with
    ``mp_framework.keep_cache(self, '<name>', _mp_<name>)`` and reads the local everywhere in the method. A graph does not see
    a write a property getter makes to ``self`` (the read after it gives ``None``), and in ``forward`` a tensor
    written to self and read back is an interpreted value later ops refuse ("Invalid input args for unpack call",
    "Failed to infer for primitive:DtypeToEnum"). ``keep_cache`` writes the attribute in PyNative only, so PyNative
    keeps the cache as torch does, and a graph builds the value on each call: the cached value when the builder is a
    pure function of sizes and configuration, as such caches are. The MP107 of a ``forward`` cache stays (a graph
    reads what ``__init__`` set, so a cache whose value depends on the first call's input differs). Left as written:
    an attribute written other than by ``self.<name> = value`` (``+=``, a tuple target, a nested function), or
    written by a method the getter or ``forward`` calls, and an attribute ``__init__`` makes a Parameter or a buffer
    (``register_buffer``, ``nn.Parameter``; not ``register_buffer("rope_sin", None)``, a plain ``None`` in the port,
    which the cache fills: JunyuanHe's RoPE GPT): MindSpore holds both as Parameters, and a graph keeps their write
    (an Assign, seen by the next call), where ``keep_cache`` would drop it. normflows' ActNorm flag
    (``if not self.done > 0.0: ...; self.done = torch.tensor(1.0)``) so initialises once in a graph, as in torch.

    A buffer registered again outside ``__init__`` as a cache (PaLM's ``get_mask``: ``if self.mask is not None and
    self.mask.shape[-1] >= n: return self.mask[:n, :n]``, then ``self.register_buffer("mask", mask,
    persistent=False)``) becomes ``mp_framework.keep_buffer(self, "mask", mask, persistent=False)``: PyNative
    registers it as torch does, and a graph, which refuses ``register_buffer`` in ``construct``, builds it on each
    call. Only where the same method tests ``self.<name> is None`` or ``is not None``, or reads ``self.<name>`` in the
    test of an ``if`` (Flow-TimesNet's ``if self._cached_basis.numel() == 0 or self._cached_length != length``). A
    method that reads the buffer again after registering it (``return self._cached_basis.to(dtype)``) reads it
    through a local, ``_mp_<name> = self.<name>`` at its top and ``_mp_<name> = mp_framework.keep_buffer(...)``: a
    graph would read what ``__init__`` registered there (an empty tensor), the local holds the value just built.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch
                import torch.nn as nn


                class PCN(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Linear(4, 4)

                    def encode(self, x):
                        self.feature = self.fc(x) * self.scale

                    def decode(self):
                        return self.fc(self.feature.relu())

                    def forward(self, x):
                        self.scale = x.shape[1]
                        self.encode(x)
                        return self.decode()
            """,
            after="""
                from mindspore import nn
                from mindspore import ops


                class PCN(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Dense(in_channels=4, out_channels=4)

                    def _mp_encode(self, x, _mp_scale=None):
                        if _mp_scale is None:
                            _mp_scale = getattr(self, 'scale', None)
                        _mp_feature = self.fc(x) * _mp_scale
                        self.feature = _mp_feature
                        return _mp_feature

                    def encode(self, x):
                        self._mp_encode(x)

                    def decode(self, _mp_feature=None):
                        if _mp_feature is None:
                            _mp_feature = getattr(self, 'feature', None)
                        return self.fc(ops.relu(_mp_feature))

                    def construct(self, x):
                        _mp_scale = x.shape[1]
                        self.scale = _mp_scale
                        _mp_feature = self._mp_encode(x, _mp_scale=_mp_scale)
                        self.feature = _mp_feature
                        return self.decode(_mp_feature=_mp_feature)
            """,
            note="A value written in one method and read in another is returned by the writer and passed to the "
                 "reader, through a local _mp_<name>; each method still writes self.x. An attribute the class does "
                 "not set while it is built is read with getattr(self, name, None) when the caller gives none.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn


                class RevIN(nn.Module):
                    def forward(self, x, mode):
                        if mode == 'norm':
                            self.mean = x.mean(dim=1, keepdim=True)
                            return x - self.mean
                        return x + self.mean


                class Model(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.revin = RevIN()
                        self.fc = nn.Linear(4, 4)

                    def forward(self, x):
                        x = self.revin(x, 'norm')
                        return self.revin(self.fc(x), 'denorm')
            """,
            after="""
                from mindspore import nn
                from mindport.runtime import math as mp_math
                from mindport.runtime import framework as mp_framework


                class RevIN(nn.Cell):
                    def _mp_construct(self, x, mode, _mp_state=None):
                        _mp_mean, = _mp_state if _mp_state is not None else (None,)
                        if _mp_mean is None:
                            _mp_mean = getattr(self, 'mean', None)
                        if mode == 'norm':
                            _mp_mean = mp_math.mean(x, dim=1, keepdim=True)
                            self.mean = _mp_mean
                            return x - _mp_mean, _mp_mean
                        return x + _mp_mean, _mp_mean

                    def construct(self, x, mode):
                        return self._mp_construct(x, mode)[0]


                class Model(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.revin = RevIN()
                        self.fc = nn.Dense(in_channels=4, out_channels=4)

                    def construct(self, x):
                        _mp_revin_state = None
                        _mp_out = mp_framework.held_call(self.revin, x, 'norm', _mp_state=_mp_revin_state)
                        _mp_revin_state = _mp_out[1]
                        x = _mp_out[0]
                        _mp_out = mp_framework.held_call(self.revin, self.fc(x), 'denorm', _mp_state=_mp_revin_state)
                        _mp_revin_state = _mp_out[1]
                        return _mp_out[0]
            """,
            note="A sub-Cell's state from one call to the next in its parent's forward is passed along; RevIN's "
                 "construct keeps its signature for every other caller.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Cached(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.edges = None

                    def forward(self, x):
                        if self.edges is None:
                            self.edges = torch.ones(x.shape[0])
                        return x * self.edges[0]
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import framework as mp_framework


                class Cached(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.edges = None

                    def construct(self, x):
                        _mp_edges = self.edges
                        # mindport: MP107 construct reads self.edges before writing it: PyNative takes the value the previous call left, a static graph (GRAPH_MODE) the value __init__ set
                        if _mp_edges is None:
                            _mp_edges = ops.ones(x.shape[0])
                            mp_framework.keep_cache(self, 'edges', _mp_edges)
                        return x * _mp_edges[0]
            """,
            note="State kept from one call to the next keeps its PyNative meaning and is said. A cache built on first "
                 "use is read through a local and kept on self in PyNative only (keep_cache): a graph builds it on "
                 "each call.",
        ),
        Example(
            before="""
                import torch
                import torch.nn as nn


                class Rope(nn.Module):
                    def __init__(self, dim):
                        super().__init__()
                        self.dim = dim
                        self._freqs = None

                    @property
                    def freqs(self):
                        if self._freqs is None:
                            self._freqs = torch.arange(self.dim) * 0.5
                        return self._freqs

                    def forward(self, x):
                        return x * self.freqs
            """,
            after="""
                from mindspore import nn
                from mindspore import ops
                from mindport.runtime import framework as mp_framework


                class Rope(nn.Cell):
                    def __init__(self, dim):
                        super().__init__()
                        self.dim = dim
                        self._freqs = None

                    @property
                    def freqs(self):
                        _mp__freqs = self._freqs
                        if _mp__freqs is None:
                            _mp__freqs = ops.arange(start=self.dim) * 0.5
                            mp_framework.keep_cache(self, '_freqs', _mp__freqs)
                        return _mp__freqs

                    def construct(self, x):
                        return x * self.freqs
            """,
            note="A property that builds a cache on first read reads it through a local: a graph builds it on each "
                 "call, PyNative keeps the cache.",
        ),
        Example(
            before="""
                from mindspore import nn


                class Kept(nn.Cell):
                    def construct(self, x):
                        self.attn = x * 2
                        return x + 1
            """,
            note="A value kept on self that no method reads is left as it is.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx)
        self._module_classes = module_classes
        self._plans: dict[int, _MethodPlan] = {}  # id of an original method -> what to rewrite in it
        self._remarks: dict[int, str] = {}  # id of an original node -> MP107 message
        self._local_reads: dict[int, str] = {}  # id of a self.a read -> a (read as the local _mp_a)
        self._call_args: dict[int, tuple] = {}  # id of a threaded helper's call -> (ins passed as locals, its plan)
        self._lazy: dict[int, list[str]] = {}  # id of a @property building a cache on self -> its attributes
        self._buffer_calls: set[int] = set()  # ids of self.register_buffer(...) calls caching a value (keep_buffer)
        self._buffer_methods: dict[int, tuple] = {}  # id of a method -> (buffers it assigns, buffers read after)
        self._state_writes: dict[int, str] = {}  # id of an `out, self.h = f(x, self.h)` statement line -> h
        self._held_calls: dict[int, set] = {}  # id of a parent's construct -> the held sub-Cells' attributes

    def visit_Module(self, node: cst.Module) -> None:
        classes: list[cst.ClassDef] = []
        outside: dict[str, list] = {}  # attribute name -> Attribute nodes whose receiver is not self

        class Visitor(cst.CSTVisitor):
            def visit_ClassDef(self, inner: cst.ClassDef) -> None:
                classes.append(inner)

            def visit_Attribute(self, inner: cst.Attribute) -> None:
                if not _is_self(inner.value):
                    outside.setdefault(inner.attr.value, []).append(inner)

        walk(node, Visitor())
        defined: dict[str, int] = {}  # method name -> how many classes of the file define it
        for cls in classes:
            if isinstance(cls.body, cst.IndentedBlock):
                for name in {s.name.value for s in cls.body.body if isinstance(s, cst.FunctionDef)}:
                    defined[name] = defined.get(name, 0) + 1
        held = self.ctx.options.held_cells
        children = {child for child, _, _ in held}
        for cls in classes:
            if cls.name.value in self._module_classes and isinstance(cls.body, cst.IndentedBlock):
                overridden = {name for name, n in defined.items() if n > 1}
                _Class(cls, outside, self._plans, self._remarks, self._local_reads, self._call_args, overridden,
                       held=cls.name.value in children).plan()
                _lazy_properties(cls, self._lazy)
                _cache_buffers(cls, self._buffer_calls, self._buffer_methods, self._remarks)
                _state_tuples(cls, self._state_writes, self._remarks)
        for cls in classes:  # a parent's calls of a held sub-Cell: held_call, the state passed along
            attrs = {attr for _, parent, attr in held if parent == cls.name.value}
            entry = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value in _ENTRIES),
                         None) if attrs and isinstance(cls.body, cst.IndentedBlock) else None
            if entry is not None:
                self._held_calls[id(entry)] = attrs
                for call in _held_left(entry, attrs):
                    self._remarks.setdefault(id(call), _LEFT_CALL)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._say(node)

    def leave_Attribute(self, original_node, updated_node):
        attr = self._local_reads.get(id(original_node))
        if attr is None:
            return updated_node
        self.ctx.converted_sites += 1
        return cst.Name(f"_mp_{attr}")

    def leave_Call(self, original_node, updated_node):
        if id(original_node) in self._buffer_calls:  # self.register_buffer(n, v, ...) -> keep_buffer(self, n, v, ...)
            self.ctx.converted_sites += 1
            return updated_node.with_changes(
                func=self.ctx.target_expr("mindport.runtime.framework.keep_buffer"),
                args=[cst.Arg(cst.Name("self")), *updated_node.args])
        local, callee = self._call_args.get(id(original_node), (None, None))
        if callee is None:
            return updated_node
        if callee.wrapped:  # self.encode(x) -> self._mp_encode(x): the threaded twin
            func = updated_node.func
            updated_node = updated_node.with_changes(func=func.with_changes(attr=cst.Name("_mp_" + func.attr.value)))
        if not callee.ins:
            return updated_node
        args = list(updated_node.args)
        for attr in callee.ins:
            value = cst.Name(f"_mp_{attr}") if attr in local else cst.parse_expression(_self_read(attr, callee))
            args.append(cst.Arg(value, keyword=cst.Name(f"_mp_{attr}"),
                                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
        return updated_node.with_changes(args=args)

    def visit_Call(self, node: cst.Call) -> None:
        self._say(node)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        attr = self._state_writes.get(id(original_node))
        if attr is None:
            return updated_node
        assign = updated_node.body[0]  # out, self.h = f(x, self.h) -> out, _mp_h = ...; keep_cache(self, "h", _mp_h)
        target = assign.targets[0].target
        elements = [e.with_changes(value=cst.Name(f"_mp_{attr}")) if _is_self_attr(e.value, attr) else e
                    for e in target.elements]
        kept = cst.SimpleStatementLine([cst.Expr(cst.Call(
            func=self.ctx.target_expr("mindport.runtime.framework.keep_cache"),
            args=[cst.Arg(cst.Name("self"), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                  cst.Arg(cst.SimpleString(f'"{attr}"'), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                  cst.Arg(cst.Name(f"_mp_{attr}"))]))])
        self.ctx.converted_sites += 1
        return cst.FlattenSentinel([updated_node.with_changes(body=[assign.with_changes(
            targets=[assign.targets[0].with_changes(target=target.with_changes(elements=elements))])]), kept])

    def _say(self, node) -> None:
        message = self._remarks.pop(id(node), None)
        if message is not None:
            self.remark(node, "MP107", message)

    def leave_FunctionDef(self, original_node, updated_node):
        held = self._held_calls.get(id(original_node))
        if held:
            rewriter = _HeldCalls(held, self.ctx.target_text("mindport.runtime.framework.held_call"))
            updated_node = transform(updated_node, rewriter)
            if rewriter.sites:
                updated_node = _with_state_locals(updated_node, sorted(rewriter.bound))
            self.ctx.converted_sites += rewriter.sites
        buffers = self._buffer_methods.get(id(original_node))
        if buffers:
            rewriter = _BufferLocals(*buffers, self.ctx.target_text("mindport.runtime.framework.keep_buffer"))
            updated_node = transform(updated_node, rewriter)
            self.ctx.converted_sites += rewriter.sites
        plan = self._plans.get(id(original_node))
        lazy = self._lazy.get(id(original_node))
        if lazy and plan is not None:
            lazy = [a for a in lazy if a not in plan.locals and a not in plan.ins and a not in plan.outs]
        if lazy:
            rewriter = _LazyProperty(lazy, self.ctx.target_text("mindport.runtime.framework.keep_cache"))
            updated_node = transform(updated_node, rewriter)
            self.ctx.converted_sites += rewriter.sites
        if plan is None:
            return updated_node
        rewriter = _Rewriter(plan, self.ctx.target_text("mindport.runtime.framework.keep_cache"))
        new = transform(updated_node, rewriter)
        if plan.state:
            new = _state_signature(new, plan)
        elif plan.ins or plan.outs:
            new = _thread_signature(new, plan)
        self.ctx.converted_sites += rewriter.sites + bool(plan.ins or plan.outs)
        if plan.wrapped:
            return cst.FlattenSentinel([new.with_changes(name=cst.Name("_mp_" + new.name.value)),
                                        _public_twin(updated_node, plan)])
        return new


@dataclass
class _MethodPlan:
    ins: list[str] = field(default_factory=list)  # attributes passed in (keyword _mp_<name>)
    outs: list[str] = field(default_factory=list)  # attributes returned
    had_value: bool = False  # the method returned a value of its own: it now returns (value, *outs)
    wrapped: bool = False  # a public method whose return changes: threaded as _mp_<name>, itself kept (_public_twin)
    locals: set[str] = field(default_factory=set)  # attributes mirrored by a local _mp_<name> in the method
    kept: set[str] = field(default_factory=set)  # locals written back with keep_cache (a recast: see _recasts)
    calls: dict[str, "_MethodPlan"] = field(default_factory=dict)  # threaded helpers it calls, by name
    # ins the class does not set while it is built (RevIN's ``self.last``, written by its first call and read under
    # an ``if``): read with ``getattr(self, name, None)``, where torch's read is never reached before the write
    unset: set[str] = field(default_factory=set)
    state: bool = False  # a held sub-Cell's construct: takes _mp_state, returns (value, *outs) (see _state_signature)


@dataclass
class _Summary:
    needs: dict[str, object] = field(default_factory=dict)  # read before a sure write -> first node
    writes: dict[str, object] = field(default_factory=dict)  # written (anywhere) -> first node
    sure: set[str] = field(default_factory=set)  # written on every path through the method


def _is_self(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


def _self_call(node) -> str | None:
    """``self.name(...)`` -> name."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and _is_self(node.func.value):
        return node.func.attr.value
    return None


def _returns_value(fn: cst.FunctionDef) -> bool:
    found = []

    class Visitor(cst.CSTVisitor):
        def visit_Return(self, node: cst.Return) -> None:
            if node.value is not None:
                found.append(node)

        def visit_Yield(self, node) -> None:
            found.append(node)

        def on_visit(self, node) -> bool:
            return super().on_visit(node) and (node is fn or not isinstance(node, _NESTED))

    walk(fn, Visitor())
    return bool(found)


def _yields(fn: cst.FunctionDef) -> bool:
    found = []

    class Visitor(cst.CSTVisitor):
        def visit_Yield(self, node) -> None:
            found.append(node)

        def on_visit(self, node) -> bool:
            return super().on_visit(node) and (node is fn or not isinstance(node, _NESTED))

    walk(fn, Visitor())
    return bool(found)


def _targets(expr, out: list) -> None:
    """``self.a`` nodes a target expression binds (``self.a, self.b = ...`` too)."""
    if isinstance(expr, cst.Attribute) and _is_self(expr.value):
        out.append(expr)
    elif isinstance(expr, (cst.Tuple, cst.List)):
        for element in expr.elements:
            _targets(element.value, out)
    elif isinstance(expr, cst.StarredElement):
        _targets(expr.value, out)


class _Class:
    """The analysis of one model class: which attributes cross from one method to another, which helpers carry
    them, and what is said where they cannot."""

    def __init__(self, cls, outside, plans, remarks, local_reads, call_args, overridden=frozenset(),
                 held=False) -> None:
        self.held = held  # one instance, held by a parent whose construct calls it more than once: see _held_cells
        self.entry_plan: _MethodPlan | None = None  # the threaded construct's plan, when held
        self.overridden = overridden  # names other classes of the file define too (an override would not match)
        self.local_reads = local_reads
        self.call_args = call_args
        self.cls = cls
        self.outside = outside
        self.plans = plans
        self.remarks = remarks
        self.methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}

    # -- facts ------------------------------------------------------------------------------------------------
    def _calls_of(self, fn) -> set[str]:
        names: set[str] = set()
        methods = self.methods

        class Visitor(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                name = _self_call(node)
                if name in methods:
                    names.add(name)

        walk(fn, Visitor())
        return names

    def _direct(self, fn) -> tuple[set[str], set[str]]:
        """Attributes a method reads and writes on self (methods excepted)."""
        reads: set[str] = set()
        writes: set[str] = set()
        written_nodes: set[int] = set()
        methods = self.methods

        class Visitor(cst.CSTVisitor):
            def visit_Assign(self, node: cst.Assign) -> None:
                for target in node.targets:
                    hits: list = []
                    _targets(target.target, hits)
                    for hit in hits:
                        written_nodes.add(id(hit))
                        writes.add(hit.attr.value)

            def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
                hits: list = []
                _targets(node.target, hits)
                for hit in hits:
                    written_nodes.add(id(hit))
                    writes.add(hit.attr.value)

            def visit_AugAssign(self, node: cst.AugAssign) -> None:
                hits: list = []
                _targets(node.target, hits)
                for hit in hits:
                    writes.add(hit.attr.value)  # and read: the node stays out of written_nodes

            def visit_Attribute(self, node: cst.Attribute) -> None:
                if _is_self(node.value) and id(node) not in written_nodes and node.attr.value not in methods:
                    reads.add(node.attr.value)

        walk(fn, Visitor())
        return reads, writes - set(methods)

    def plan(self) -> None:
        methods = self.methods
        if any(p.name.value.startswith("_mp_") for fn in methods.values()
               for p in (*fn.params.params, *fn.params.kwonly_params)):
            return  # converted already (a helper taking _mp_<name>): converting again changes nothing
        building = {"__init__"}
        todo = ["__init__"] if "__init__" in methods else []
        while todo:
            for name in self._calls_of(methods[todo.pop()]):
                if name not in building:
                    building.add(name)
                    todo.append(name)
        runtime = {name for name, fn in methods.items()
                   if name not in building and not fn.decorators and not (name.startswith("__") and
                                                                           name.endswith("__"))}
        compiled = {name for name in _ENTRIES if name in runtime}
        todo = list(compiled)
        while todo:
            for name in self._calls_of(methods[todo.pop()]):
                if name in runtime and name not in compiled:
                    compiled.add(name)
                    todo.append(name)
        if not compiled:
            return
        # methods forward does not reach run in Python: their reads are the graph's outside readers
        self.py_reads = set().union(set(), *(self._direct(methods[n])[0] for n in runtime - compiled))
        runtime = compiled
        direct = {name: self._direct(methods[name]) for name in runtime}
        crossing = set()
        for name, (_, writes) in direct.items():
            for other, (reads2, writes2) in direct.items():
                if other != name:
                    crossing |= writes & (reads2 | writes2)
        entry = next((name for name in _ENTRIES if name in runtime), None) if self.held else None
        if entry is not None:  # what construct reads that a call writes: carried from one call to the next
            crossing |= direct[entry][0] & set().union(*(w for _, w in direct.values()))
        read_outside = any(w & set(self.outside) for name, (_, w) in direct.items() if name in _ENTRIES)
        if not crossing and not read_outside and not any(self._reads_first(name, direct) for name in runtime):
            return  # (a forward writing self.x that another class reads, self.block.x, is said below: MP107)
        stored = self._stored()
        crossing -= stored
        self.crossing = crossing
        self.tracked = set().union(*(w for _, w in direct.values())) - stored
        self.recast = {a: d for a, d in _recasts(self.cls, self.tracked, building).items() if a not in self.outside}
        self.direct = direct
        self.runtime = runtime
        threaded = {name for name in runtime if name not in _ENTRIES and name not in self.overridden
                    and self._callable_inside_only(name)}
        if entry is not None:  # (another class's construct is no override: the parent calls this class's)
            threaded.add(entry)
        while True:
            summaries = self._summaries(threaded)
            plans = {name: self._plan_of(name, summaries[name]) for name in threaded}
            flows = {}
            others = self._writes_behind(threaded)
            for name in runtime:
                given = plans[name].ins if name in plans else []
                flows[name] = _Flow(self.tracked, plans)
                flows[name].method(methods[name], given, others)
            broken = {name for name in threaded if (plans[name].outs and not plans[name].had_value
                                                    and self._value_uses(name))
                      or flows[name].unsafe & {*plans[name].ins, *plans[name].outs}
                      or (name == entry and not (plans[name].ins and plans[name].had_value))}
            if not broken:
                break
            threaded -= broken
        at_init = self._set_at_init(building)
        for plan in plans.values():
            plan.unset = set(plan.ins) - at_init
        self.entry_plan = plans.get(entry) if entry is not None else None
        if self.entry_plan is not None:  # its state: every attribute it takes or gives, in one order
            self.entry_plan.outs = sorted({*self.entry_plan.ins, *self.entry_plan.outs})
            self.entry_plan.state = True
        for name in runtime:
            fn = methods[name]
            flow = flows[name]
            plan = plans.get(name, _MethodPlan())
            plan.calls = {callee: plans[callee] for callee in self._calls_of(fn) if callee in plans
                          and (plans[callee].ins or plans[callee].outs)}
            local = set(flow.sure_reads.values()) | {a for _, ins in flow.call_sure.values() for a in ins}
            local |= {*plan.ins, *plan.outs} | {a for callee in plan.calls.values() for a in callee.outs}
            plan.locals = local - flow.unsafe
            plan.kept = plan.locals & set(self.recast)
            for node_id, attr in flow.sure_reads.items():
                if attr in plan.locals:
                    self.local_reads[node_id] = attr
            for call_id, (callee, ins) in flow.call_sure.items():
                self.call_args[call_id] = (ins & plan.locals, plans[callee])
            if plan.ins or plan.outs or plan.calls or plan.locals:
                self.plans[id(fn)] = plan
        for name in building:  # __init__ calling a threaded helper: same call-site rewrite
            if name in methods:
                calls = {c: plans[c] for c in self._calls_of(methods[name]) if c in plans
                         and (plans[c].ins or plans[c].outs)}
                if calls:
                    self.plans[id(methods[name])] = _MethodPlan(calls=calls)
                    for call_id, callee in self._call_ids(methods[name], calls):
                        self.call_args[call_id] = (set(), calls[callee])
        self._say(threaded, summaries)

    def _set_at_init(self, building: set[str]) -> set[str]:
        """The attributes a built object has: those ``__init__`` and the methods it calls write, the class body's."""
        names = set().union(*(self._direct(self.methods[n])[1] for n in building if n in self.methods))
        for stmt in self.cls.body.body:
            for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()):
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                    [small.target] if isinstance(small, cst.AnnAssign) and small.value is not None else []
                names |= {t.value for t in targets if isinstance(t, cst.Name)}
        return names

    def _writes_behind(self, threaded: set[str]) -> dict[str, set[str]]:
        """What each method that is not threaded writes on self, with the methods it calls (a caller's local copy
        would not see it)."""
        writes = {name: set(self._direct(fn)[1]) for name, fn in self.methods.items()}
        calls = {name: self._calls_of(fn) for name, fn in self.methods.items()}
        for _ in range(len(writes)):
            for name in writes:
                for callee in calls[name]:
                    writes[name] |= writes.get(callee, set())
        return {name: w for name, w in writes.items() if name not in threaded}

    def _call_ids(self, fn, calls) -> list[tuple[int, str]]:
        ids: list[tuple[int, str]] = []

        class Visitor(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                if _self_call(node) in calls:
                    ids.append((id(node), _self_call(node)))

        walk(fn, Visitor())
        return ids

    def _callable_inside_only(self, name: str) -> bool:
        """Every reference to the method is ``self.name(...)`` in this class, as a statement, a one-target
        assignment's value or a return value, outside nested functions."""
        fn = self.methods[name]
        if _yields(fn):
            return False
        if name in self.outside:
            return False
        good: set[int] = set()
        seen: list = []
        cls = self.cls

        class Visitor(cst.CSTVisitor):
            def __init__(self) -> None:
                self.depth = 0

            def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
                self.depth += 1

            def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
                self.depth -= 1

            def visit_Lambda(self, node) -> None:
                self.depth += 2

            def leave_Lambda(self, node) -> None:
                self.depth -= 2

            def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
                if self.depth != 1 or len(node.body) != 1:
                    return
                small = node.body[0]
                value = None
                if isinstance(small, cst.Expr):
                    value = small.value
                elif isinstance(small, cst.Assign) and len(small.targets) == 1:
                    value = small.value
                elif isinstance(small, cst.Return):
                    value = small.value
                if _self_call(value) == name:
                    good.add(id(value.func))

            def visit_Attribute(self, node: cst.Attribute) -> None:
                if node.attr.value == name:
                    seen.append(node)

        walk(cls, Visitor())
        return bool(seen) and all(id(node) in good for node in seen)

    def _value_uses(self, name: str) -> bool:
        """Some call of the method uses its value (an assignment or a return)."""
        uses = []

        class Visitor(cst.CSTVisitor):
            def visit_Assign(self, node: cst.Assign) -> None:
                if _self_call(node.value) == name:
                    uses.append(node)

            def visit_Return(self, node: cst.Return) -> None:
                if _self_call(node.value) == name:
                    uses.append(node)

        walk(self.cls, Visitor())
        return bool(uses)

    def _plan_of(self, name: str, summary: _Summary) -> _MethodPlan:
        outs = [a for a in summary.writes if a in self.crossing]
        ins = [a for a in summary.needs if a in self.crossing]
        ins += [a for a in outs if a not in summary.sure and a not in ins]  # the old value, for a write under if
        fn = self.methods[name]
        plan = _MethodPlan(ins=ins, outs=outs, had_value=_returns_value(fn))
        plan.wrapped = bool(outs) and not name.startswith("_")  # keeps its name and return: see _public_twin
        return plan

    def _summaries(self, threaded: set[str]) -> dict[str, _Summary]:
        summaries = {name: _Summary() for name in self.runtime}
        for _ in range(len(self.runtime) + 2):
            changed = False
            plans = {name: self._plan_of(name, summaries[name]) for name in threaded}
            for name in self.runtime:
                new = _Flow(self.tracked, plans).method(self.methods[name])
                old = summaries[name]
                if set(new.needs) != set(old.needs) or set(new.writes) != set(old.writes) or new.sure != old.sure:
                    changed = True
                summaries[name] = new
            if not changed:
                break
        return summaries

    # -- what cannot be threaded ------------------------------------------------------------------------------
    def _stored(self) -> set[str]:
        """Attributes that are parameters or buffers (``register_buffer("n", ...)``, ``self.n = nn.Parameter(...)``):
        a graph writes those back (an Assign of the Parameter). Not one registered as ``None``: a plain attribute."""
        names: set[str] = set()

        class Visitor(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                func = node.func
                leaf = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
                if leaf in ("register_buffer", "register_parameter") and node.args \
                        and isinstance(node.args[0].value, cst.SimpleString) and not _none_buffer(node):
                    names.add(node.args[0].value.evaluated_value)

            def visit_Assign(self, node: cst.Assign) -> None:
                value = node.value
                func = value.func if isinstance(value, cst.Call) else None
                leaf = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
                if leaf == "Parameter":
                    for target in node.targets:
                        hits: list = []
                        _targets(target.target, hits)
                        names.update(hit.attr.value for hit in hits)

        walk(self.cls, Visitor())
        return names

    def _reads_first(self, name: str, direct) -> bool:
        """A method reads an attribute it also writes (a cache kept from one call to the next, perhaps)."""
        reads, writes = direct[name]
        return bool(reads & writes)

    def _say(self, threaded: set[str], summaries: dict[str, _Summary]) -> None:
        plans = {name: self._plan_of(name, summaries[name]) for name in threaded}
        entries = self.runtime - threaded
        for name in sorted(self.runtime):
            summary = summaries[name]
            shown = "construct" if name == "forward" else name
            ins = plans[name].ins if name in plans else []
            for attr, node in summary.needs.items():
                if attr in ins and not (name in _ENTRIES and self.entry_plan is not None
                                        and attr not in self.entry_plan.unset):
                    continue  # (a held construct's first call still reads what __init__ set, in a graph)
                elsewhere = any(attr in self.direct[other][1] for other in entries if other != name)
                if attr in self.recast and not elsewhere:
                    if self.recast[attr]:  # a dtype cast: equal unless the dtype changes from call to call
                        self.remarks.setdefault(id(node), (
                            f"{shown} casts self.{attr} again on each call: PyNative casts the value the previous "
                            f"call left, a static graph (GRAPH_MODE) the value __init__ set (equal unless the dtype "
                            f"changes from one call to the next)"))
                    continue
                if not elsewhere:
                    text = (f"{shown} reads self.{attr} before writing it: PyNative takes the value the previous call "
                            f"left, a static graph (GRAPH_MODE) the value __init__ set")
                else:
                    text = (f"{shown} reads self.{attr}, which another method writes: a static graph (GRAPH_MODE) "
                            f"does not carry a self.x write from one method to another")
                self.remarks.setdefault(id(node), text)
            if name not in entries:
                continue
            for attr, node in summary.writes.items():
                if attr in summary.needs and name in _ENTRIES:
                    continue  # said at the read
                others = [o for o in sorted(entries) if o != name and attr in summaries[o].needs]
                if others or attr in self.outside or attr in self.py_reads:
                    who = ", ".join("construct" if o == "forward" else o for o in others) if others \
                        else "code outside the class" if attr in self.outside else "a method construct does not call"
                    self.remarks.setdefault(id(node), f"self.{attr} is read by {who}: a static graph (GRAPH_MODE) "
                                                      f"does not keep this write")


_LEFT_CALL = ("a call of a sub-Cell that keeps state on self from one call to the next, written where the state "
              "cannot be passed along (a line of one such call, outside a condition, is): PyNative takes the state "
              "the previous call left, a static graph (GRAPH_MODE) the value __init__ set")


def _line_calls(line: cst.SimpleStatementLine, held) -> tuple[list, bool]:
    """A line's calls of held sub-Cells, and whether it can pass their state along (one such call, a line of one
    statement, the call not under a condition of the line, a lambda or a comprehension)."""
    found: list = []
    guarded: list = []

    class Finder(cst.CSTVisitor):
        def __init__(self) -> None:
            self.under = 0

        def _in(self, node) -> None:
            self.under += 1

        def _out(self, node) -> None:
            self.under -= 1

        visit_BooleanOperation = visit_IfExp = visit_Lambda = visit_ListComp = visit_SetComp = _in
        visit_DictComp = visit_GeneratorExp = _in
        leave_BooleanOperation = leave_IfExp = leave_Lambda = leave_ListComp = leave_SetComp = _out
        leave_DictComp = leave_GeneratorExp = _out

        def visit_Call(self, node: cst.Call) -> None:
            if _self_call(node) in held:
                (guarded if self.under else found).append(node)

    walk(line, Finder())
    return found + guarded, not guarded and len(found) == 1 and len(line.body) == 1


def _held_left(fn: cst.FunctionDef, held) -> list:
    """The calls of held sub-Cells in a parent's construct that cannot pass the state along (said: MP107)."""
    left: list = []

    class Visitor(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node) -> bool:
            calls, passes = _line_calls(node, held)
            if not passes:
                left.extend(calls)
            return False

        def visit_Call(self, node: cst.Call) -> None:  # in a compound statement's header, a nested function ...
            if _self_call(node) in held:
                left.append(node)

    walk(fn.body, Visitor())
    return left


class _HeldCalls(cst.CSTTransformer):
    """In a parent's construct, each line calling a held sub-Cell (``y = self.revin(y, 'denorm')``) calls it through
    ``mp_framework.held_call`` with the state the earlier call gave (``_mp_out = held_call(self.revin, y, 'denorm',
    _mp_state=_mp_revin_state)``, ``_mp_revin_state = _mp_out[1]``, ``y = _mp_out[0]``): the call is made first, its
    value read where it stood (``self.revin(x, 'norm').permute(0, 2, 1)``). Other calls are left (``_held_left``)."""

    def __init__(self, held: set, helper: str) -> None:
        super().__init__()
        self.held = held
        self.helper = helper
        self.depth = 0
        self.sites = 0
        self.bound: set[str] = set()

    def visit_FunctionDef(self, node) -> bool:
        self.depth += 1
        return self.depth == 1

    def leave_FunctionDef(self, original_node, updated_node):
        self.depth -= 1
        return updated_node

    def visit_SimpleStatementLine(self, node) -> bool:
        return False  # rewritten whole in leave_SimpleStatementLine

    def leave_SimpleStatementLine(self, original_node, updated_node):
        calls, passes = _line_calls(updated_node, self.held)
        if not passes:
            return updated_node
        call = calls[0]
        attr = _self_call(call)
        state = f"_mp_{attr}_state"
        args = [cst.Arg(call.func, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                *_comma(call.args, True),
                cst.Arg(cst.Name(state), keyword=cst.Name("_mp_state"),
                        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))]
        first = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name("_mp_out"))],
                                                    cst.Call(cst.parse_expression(self.helper), args=args))],
                                        leading_lines=updated_node.leading_lines)
        rest = updated_node.deep_replace(call, cst.parse_expression("_mp_out[0]"))
        self.bound.add(state)
        self.sites += 1
        return cst.FlattenSentinel([first, parse_statement(f"{state} = _mp_out[1]\n"),
                                    rest.with_changes(leading_lines=[])])


def _with_state_locals(fn: cst.FunctionDef, names) -> cst.FunctionDef:
    """``_mp_<attr>_state = None`` at the top of the parent's construct: the first call reads the sub-Cell's own
    attributes (the previous call's values in PyNative)."""
    body = list(fn.body.body)
    head = 1 if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
        and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)) else 0
    body[head:head] = [parse_statement(f"{n} = None\n") for n in names]
    return fn.with_changes(body=fn.body.with_changes(body=body))


def _state_signature(fn: cst.FunctionDef, plan: _MethodPlan) -> cst.FunctionDef:
    """A held sub-Cell's threaded construct: a keyword ``_mp_state=None`` (the state the previous call gave, in the
    order of ``plan.outs``) unpacked first; an attribute it does not bring is read from self as a threaded helper's
    is; each return gives ``(value, *state)`` (``mp_framework.held_call`` splits it)."""
    new = _thread_signature(fn, _MethodPlan(ins=[], outs=plan.outs, had_value=plan.had_value, locals=plan.locals))
    names = ", ".join(f"_mp_{a}" for a in plan.outs) + ("," if len(plan.outs) == 1 else "")
    nones = ", ".join("None" for _ in plan.outs) + ("," if len(plan.outs) == 1 else "")
    prologue = [parse_statement(f"{names} = _mp_state if _mp_state is not None else ({nones})\n")]
    prologue += [parse_statement(f"if _mp_{a} is None:\n    _mp_{a} = {_self_read(a, plan)}\n") if a in plan.locals
                 else parse_statement(f"self.{a} = _mp_{a} if _mp_{a} is not None else {_self_read(a, plan)}\n")
                 for a in plan.ins]
    body = list(new.body.body)
    head = 1 if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
        and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)) else 0
    body[head:head] = prologue
    return new.with_changes(params=with_none_keywords(new.params, ["_mp_state"]),
                            body=new.body.with_changes(body=body))


class _Flow:
    """Walks one method's statements in order: the crossing attributes it reads before writing them for certain,
    those it writes, and those written on every path; a threaded helper's call reads its ins and writes its outs."""

    def __init__(self, crossing: set[str], plans: dict[str, _MethodPlan]) -> None:
        self.crossing = crossing
        self.plans = plans
        self.summary = _Summary()
        self.sure_reads: dict[int, str] = {}  # id of a self.a read where a is written for certain before -> a
        self.call_sure: dict[int, tuple] = {}  # id of a threaded call -> (helper, its ins written for certain before)
        self.unsafe: set[str] = set()  # attributes a local cannot mirror here (augmented or nested writes)
        self.exits: list[set[str]] = []  # per return statement: what is written for certain when it returns

    def method(self, fn: cst.FunctionDef, given=(), others=None) -> _Summary:
        body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else [fn.body]
        # written on every path: to the end and to each return (``if not self.training: return`` before the write)
        self.summary.sure = self.block(body, set(given)).intersection(*self.exits)
        unsafe = self.unsafe
        crossing = self.crossing
        others = others or {}

        class Visitor(cst.CSTVisitor):
            def __init__(self) -> None:
                self.depth = 0

            def visit_FunctionDef(self, node) -> None:
                self.depth += 1

            def leave_FunctionDef(self, node) -> None:
                self.depth -= 1

            def visit_AugAssign(self, node: cst.AugAssign) -> None:
                hits: list = []
                _targets(node.target, hits)
                unsafe.update(h.attr.value for h in hits)

            def visit_Del(self, node) -> None:
                unsafe.update(crossing)

            def visit_Assign(self, node: cst.Assign) -> None:
                for target in node.targets:
                    hits: list = []
                    _targets(target.target, hits)
                    if self.depth > 1 or len(node.targets) > 1 or (hits and not isinstance(
                            target.target, (cst.Attribute, cst.Tuple, cst.List))):
                        unsafe.update(h.attr.value for h in hits)

            def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
                hits: list = []
                _targets(node.target, hits)
                unsafe.update(h.attr.value for h in hits)

            def visit_NamedExpr(self, node) -> None:
                unsafe.update(crossing)

            def visit_Call(self, node: cst.Call) -> None:
                name = _self_call(node)
                if name in others:  # a method not threaded writes these behind the local's back
                    unsafe.update(others[name])
                elif isinstance(node.func, cst.Name) and node.func.value in ("setattr", "delattr", "exec"):
                    unsafe.update(crossing)

        walk(fn, Visitor())
        return self.summary

    def block(self, statements, sure: set[str]) -> set[str]:
        sure = set(sure)
        for stmt in statements:
            sure = self.statement(stmt, sure)
        return sure

    def statement(self, stmt, sure: set[str]) -> set[str]:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                sure = self.small(small, sure)
            return sure
        if isinstance(stmt, cst.If):
            self.reads(stmt.test, sure)
            body = self.block(stmt.body.body, sure)
            if stmt.orelse is None:
                return sure
            other = self.statement(stmt.orelse, sure) if isinstance(stmt.orelse, cst.If) \
                else self.block(stmt.orelse.body.body, sure)
            return sure | (body & other)
        if isinstance(stmt, cst.For):
            self.reads(stmt.iter, sure)
            self.block(stmt.body.body, sure)
            if stmt.orelse:
                self.block(stmt.orelse.body.body, sure)
            return sure
        if isinstance(stmt, cst.While):
            self.reads(stmt.test, sure)
            self.block(stmt.body.body, sure)
            return sure
        if isinstance(stmt, cst.With):
            for item in stmt.items:
                self.reads(item.item, sure)
            return self.block(stmt.body.body, sure)
        if isinstance(stmt, cst.FunctionDef):
            self.reads(stmt, sure)
            return sure
        # try, match, class ...: reads as reads, writes as maybe
        self.reads(stmt, sure)
        self.writes(stmt)
        return sure

    def small(self, small, sure: set[str]) -> set[str]:
        targets: list = []
        if isinstance(small, cst.Assign):
            for target in small.targets:
                _targets(target.target, targets)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            _targets(small.target, targets)
        skip = {id(t) for t in targets}
        self.reads(small, sure, skip)
        written = [t.attr.value for t in targets]
        if isinstance(small, cst.AugAssign):
            hits: list = []
            _targets(small.target, hits)
            written += [h.attr.value for h in hits]
            targets += hits
        called = self.call_outs(small)
        written += [attr for attr, _ in called]
        for node, attr in zip(targets, [t.attr.value for t in targets]):
            if attr in self.crossing:
                self.summary.writes.setdefault(attr, node)
        for attr, call in called:
            self.summary.writes.setdefault(attr, call)
        sure = sure | {a for a in written if a in self.crossing}
        if isinstance(small, cst.Return):
            self.exits.append(sure)
        return sure

    def call_outs(self, node) -> list[tuple[str, cst.Call]]:
        outs: list[tuple[str, cst.Call]] = []
        plans = self.plans

        class Visitor(cst.CSTVisitor):
            def visit_Call(self, call: cst.Call) -> None:
                name = _self_call(call)
                if name in plans:
                    outs.extend((attr, call) for attr in plans[name].outs)

        walk(node, Visitor())
        return outs

    def reads(self, node, sure: set[str], skip: frozenset | set = frozenset()) -> None:
        crossing, plans, needs = self.crossing, self.plans, self.summary.needs
        sure_reads, call_sure = self.sure_reads, self.call_sure

        class Visitor(cst.CSTVisitor):
            def visit_Attribute(self, inner: cst.Attribute) -> None:
                attr = inner.attr.value
                if _is_self(inner.value) and id(inner) not in skip and attr in crossing:
                    if attr not in sure:
                        needs.setdefault(attr, inner)
                    else:
                        sure_reads[id(inner)] = attr

            def visit_Call(self, call: cst.Call) -> None:
                name = _self_call(call)
                if name in plans:
                    call_sure[id(call)] = (name, {a for a in plans[name].ins if a in sure})
                    for attr in plans[name].ins:
                        if attr not in sure:
                            needs.setdefault(attr, call)

        walk(node, Visitor())

    def writes(self, node) -> None:
        crossing, writes = self.crossing, self.summary.writes

        class Visitor(cst.CSTVisitor):
            def visit_Assign(self, inner: cst.Assign) -> None:
                for target in inner.targets:
                    hits: list = []
                    _targets(target.target, hits)
                    for hit in hits:
                        if hit.attr.value in crossing:
                            writes.setdefault(hit.attr.value, hit)

        walk(node, Visitor())
        for attr, call in self.call_outs(node):
            self.summary.writes.setdefault(attr, call)


def _value_of(attr: str, local: set[str]) -> cst.BaseExpression:
    return cst.Name(f"_mp_{attr}") if attr in local else cst.parse_expression(f"self.{attr}")


def _out_value(attrs: list[str], local: set[str], value=None) -> cst.BaseExpression:
    if isinstance(value, cst.Tuple) and not value.lpar:  # ``return a, b`` gives one value, the pair: ((a, b), k)
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    items = ([value] if value is not None else []) + [_value_of(a, local) for a in attrs]
    if len(items) == 1:
        return items[0]
    return cst.Tuple([cst.Element(item) for item in items], lpar=[], rpar=[])


def _line(small) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([small])


def _mirror(attr: str) -> cst.SimpleStatementLine:
    return parse_statement(f"self.{attr} = _mp_{attr}\n")


class _Rewriter(cst.CSTTransformer):
    """Inside one method (not its nested functions): writes of a mirrored attribute also bind its local, the calls
    of threaded helpers bind what they return, and, when the method is threaded itself, its returns give its outs."""

    def __init__(self, plan: _MethodPlan, keep: str = "") -> None:
        super().__init__()
        self.plan = plan
        self.keep = keep  # the runtime helper's name (mp_framework.keep_cache), for plan.kept
        self.depth = 0
        self.sites = 0

    def _mirror(self, attr: str) -> cst.SimpleStatementLine:
        if attr in self.plan.kept:
            return parse_statement(f"{self.keep}(self, {attr!r}, _mp_{attr})\n")
        return _mirror(attr)

    def visit_FunctionDef(self, node) -> bool:
        self.depth += 1
        return self.depth == 1

    def leave_FunctionDef(self, original_node, updated_node):
        self.depth -= 1
        return updated_node

    def visit_Lambda(self, node) -> bool:
        return False

    def leave_Return(self, original_node, updated_node):
        plan = self.plan
        if not plan.outs:
            return updated_node
        if updated_node.value is None:  # a bare ``return`` gets a value: ``return _mp_inited``, not ``return_mp_...``
            updated_node = updated_node.with_changes(whitespace_after_return=cst.SimpleWhitespace(" "))
        if plan.had_value:
            value = updated_node.value if updated_node.value is not None else cst.Name("None")
            return updated_node.with_changes(value=_out_value(plan.outs, plan.locals, value))
        return updated_node.with_changes(value=_out_value(plan.outs, plan.locals))

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if len(updated_node.body) != 1:
            return updated_node
        small = updated_node.body[0]
        value = small.value if isinstance(small, (cst.Expr, cst.Assign, cst.Return)) else None
        name = _self_call(value)
        if name and name.startswith("_mp_") and name[4:] in self.plan.calls and self.plan.calls[name[4:]].wrapped:
            name = name[4:]  # the call of a wrapped method's twin (leave_Call renamed it)
        callee = self.plan.calls.get(name) if name else None
        if callee is not None and callee.outs:
            return self._bind(updated_node, small, value, callee)
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            return self._write(updated_node, small)
        return updated_node

    def _write(self, line, small):
        """``self.a = v`` (a mirrored) -> ``_mp_a = v`` and ``self.a = _mp_a``; tuple targets too."""
        local = self.plan.locals
        mirrored: list[str] = []

        def swap(expr):
            if isinstance(expr, cst.Attribute) and _is_self(expr.value) and expr.attr.value in local:
                mirrored.append(expr.attr.value)
                return cst.Name(f"_mp_{expr.attr.value}")
            if isinstance(expr, (cst.Tuple, cst.List)):
                return expr.with_changes(elements=[e.with_changes(value=swap(e.value)) for e in expr.elements])
            if isinstance(expr, cst.StarredElement):
                return expr.with_changes(value=swap(expr.value))
            return expr

        target = swap(small.targets[0].target)
        if not mirrored:
            return line
        self.sites += 1
        first = line.with_changes(body=[small.with_changes(targets=[small.targets[0].with_changes(target=target)])])
        return cst.FlattenSentinel([first, *[self._mirror(a) for a in mirrored]])

    def _bind(self, line, small, call, callee):
        """A threaded helper's call binds what it returns (to the local and the attribute)."""
        local = self.plan.locals
        self.sites += 1
        after = [self._mirror(a) for a in callee.outs if a in local]
        if not callee.had_value:  # a statement of its own: bind what it returns
            first = line.with_changes(body=[cst.Assign([cst.AssignTarget(_out_value(callee.outs, local))], call)])
            return cst.FlattenSentinel([first, *after])
        lines = [line.with_changes(body=[cst.Assign([cst.AssignTarget(cst.Name("_mp_out"))], call)])]
        if isinstance(small, cst.Assign):
            lines.append(_line(small.with_changes(value=cst.parse_expression("_mp_out[0]"))))
        for i, attr in enumerate(callee.outs):
            target = "_mp_" + attr if attr in local else "self." + attr
            lines.append(parse_statement(f"{target} = _mp_out[{i + 1}]\n"))
        lines += after
        if isinstance(small, cst.Return):
            lines.append(_line(small.with_changes(value=cst.parse_expression("_mp_out[0]"))))
        return cst.FlattenSentinel(lines)


def _comma(args, more: bool):
    args = list(args)
    if more and args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return args


def _self_read(attr: str, plan: _MethodPlan) -> str:
    """The read of an attribute a threaded helper takes: ``getattr(self, name, None)`` for one the class does not
    set while it is built (torch reads it only on the path that wrote it: the eager read would raise
    AttributeError), ``self.<name>`` otherwise."""
    return f"getattr(self, {attr!r}, None)" if attr in plan.unset else f"self.{attr}"


def _thread_signature(fn: cst.FunctionDef, plan: _MethodPlan) -> cst.FunctionDef:
    """New keyword parameters ``_mp_<name>=None`` for the ins, and a prologue taking them; a final return of the
    outs when the body can end without one."""
    params = with_none_keywords(fn.params, [f"_mp_{a}" for a in plan.ins])
    body = list(fn.body.body)
    head = 0
    if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
            and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        head = 1  # after the docstring
    prologue = [parse_statement(f"if _mp_{a} is None:\n    _mp_{a} = {_self_read(a, plan)}\n") if a in plan.locals else
                parse_statement(f"self.{a} = _mp_{a} if _mp_{a} is not None else {_self_read(a, plan)}\n")
                for a in plan.ins]
    body[head:head] = prologue
    if plan.outs and not (body and isinstance(body[-1], cst.SimpleStatementLine)
                          and isinstance(body[-1].body[-1], (cst.Return, cst.Raise))):
        value = _out_value(plan.outs, plan.locals, cst.Name("None") if plan.had_value else None)
        body.append(cst.SimpleStatementLine([cst.Return(value)]))
    return fn.with_changes(params=params, body=fn.body.with_changes(body=body))


def _public_twin(fn: cst.FunctionDef, plan: _MethodPlan) -> cst.FunctionDef:
    """A public method whose return the threading changes keeps its name, signature and return for callers outside
    the class (``model.encode(x)``): it calls the threaded ``_mp_<name>`` (which writes ``self.x`` as before) and
    gives what the method gave."""
    params = fn.params
    args = [cst.Arg(cst.Name(p.name.value)) for p in (*params.posonly_params, *params.params)[1:]]
    if isinstance(params.star_arg, cst.Param):
        args.append(cst.Arg(cst.Name(params.star_arg.name.value), star="*"))
    args += [cst.Arg(cst.Name(p.name.value), keyword=cst.Name(p.name.value)) for p in params.kwonly_params]
    if params.star_kwarg is not None:
        args.append(cst.Arg(cst.Name(params.star_kwarg.name.value), star="**"))
    call = cst.Call(cst.parse_expression(f"self._mp_{fn.name.value}"), args=args)
    if plan.had_value:
        value = cst.Subscript(call, [cst.SubscriptElement(cst.Index(cst.Integer("0")))])
        line = cst.SimpleStatementLine([cst.Return(value)])
    else:
        line = cst.SimpleStatementLine([cst.Expr(call)])
    return fn.with_changes(body=cst.IndentedBlock([line]), leading_lines=[cst.EmptyLine(indent=False)])


def _self_writes(fn) -> tuple[dict[str, int], set[str]]:
    """Attributes of self a function writes: plain ``self.a = v`` counts, and the names written any other way
    (``+=``, a tuple target, an annotated or nested write) which the lazy rewrite leaves alone."""
    plain: dict[str, int] = {}
    other: set[str] = set()

    class Visitor(cst.CSTVisitor):
        def __init__(self):
            self.depth = 0

        def visit_FunctionDef(self, node) -> None:
            self.depth += 1

        def leave_FunctionDef(self, node) -> None:
            self.depth -= 1

        def visit_Assign(self, node: cst.Assign) -> None:
            hits: list = []
            for target in node.targets:
                _targets(target.target, hits)
            simple = len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Attribute) and self.depth == 1
            for hit in hits:
                if simple:
                    plain[hit.attr.value] = plain.get(hit.attr.value, 0) + 1
                else:
                    other.add(hit.attr.value)

        def visit_AugAssign(self, node) -> None:
            hits: list = []
            _targets(node.target, hits)
            other.update(h.attr.value for h in hits)

        def visit_AnnAssign(self, node) -> None:
            hits: list = []
            _targets(node.target, hits)
            other.update(h.attr.value for h in hits)

    walk(fn, Visitor())
    return plain, other


def _is_property(fn: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "property" for d in fn.decorators)


def _lazy_properties(cls: cst.ClassDef, lazy: dict) -> None:
    """The @property getters and the forward of a model class that build a cache on self on first use
    (``if self.a is None:`` at the top of the body, writing ``self.a``), with the attributes they may read through a
    local: not those written other than by ``self.a = v``, nor those a method it calls (``self.m(...)``) writes."""
    methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)]
    written = {fn.name.value: _self_writes(fn) for fn in methods}
    stored = _parameters_and_buffers(methods)
    for fn in methods:
        if not (_is_property(fn) or fn.name.value in _ENTRIES) or not isinstance(fn.body, cst.IndentedBlock):
            continue
        plain, other = written[fn.name.value]
        called: set[str] = set()

        class Calls(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                name = _self_call(node)
                if name in written and name != fn.name.value:
                    called.add(name)

        walk(fn, Calls())
        elsewhere = set().union(*(set(written[n][0]) | written[n][1] for n in called)) if called else set()
        attrs = []
        for attr in _rebuilt(fn):
            if attr in plain and attr not in other and attr not in elsewhere and attr not in attrs \
                    and attr not in stored:
                attrs.append(attr)
        if attrs:
            lazy[id(fn)] = attrs


def _parameters_and_buffers(methods) -> set[str]:
    """The attributes ``__init__`` makes a Parameter or a buffer (``self.register_buffer("a", v)``, ``self.a =
    nn.Parameter(v)``): MindSpore holds both as Parameters, and a graph keeps a write of one (``self.a = v`` in
    construct is an Assign there, seen by the next call: graph23's probe kc.py, normflows' ActNorm flag
    ``self.data_dep_init_done``). ``keep_cache`` would drop that write in a graph, so such an attribute keeps it."""
    found: set[str] = set()
    for fn in methods:
        if fn.name.value != "__init__":
            continue

        class Visitor(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                if isinstance(node.func, cst.Attribute) and _is_self(node.func.value) \
                        and node.func.attr.value == "register_buffer" and node.args \
                        and isinstance(node.args[0].value, cst.SimpleString) and not _none_buffer(node):
                    found.add(node.args[0].value.raw_value)

            def visit_Assign(self, node: cst.Assign) -> None:
                if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Attribute) \
                        and _is_self(node.targets[0].target.value) and isinstance(node.value, cst.Call) \
                        and last_name(node.value.func) == "Parameter":
                    found.add(node.targets[0].target.attr.value)

        walk(fn, Visitor())
    return found


def _none_buffer(call: cst.Call) -> bool:
    """``self.register_buffer("a", None)``: torch keeps no tensor (``self.a`` reads ``None``, and the state dict has
    no entry), and the port writes ``self.a = None``, a plain attribute, which a cache built in forward may fill."""
    value = next((a.value for a in call.args[1:2] if a.keyword is None), None)
    value = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "tensor"), value)
    return isinstance(value, cst.Name) and value.value == "None"


def _rebuilt(fn: cst.FunctionDef) -> list[str]:
    """Attributes an ``if`` of the method (at any depth, not in a nested function) tests and writes in its body:
    ``if self.a is None: self.a = v``, ``if self.grid.shape[2:4] != x.shape[2:4]: self.grid = make(...)``; and the
    attributes the same body writes beside one so tested, rebuilt with it (``if self.rope_sin is None: sin, cos =
    build(T); self.rope_sin = sin; self.rope_cos = cos``: the cos cache is built exactly when the sin cache is)."""
    found: list[str] = []

    class Visitor(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            return super().on_visit(node) and (node is fn or not isinstance(node, _NESTED))

        def visit_If(self, node: cst.If) -> None:
            tested: set[str] = set()

            class Reads(cst.CSTVisitor):
                def visit_Attribute(self, inner: cst.Attribute) -> None:
                    if _is_self(inner.value):
                        tested.add(inner.attr.value)

            walk(node.test, Reads())
            written = [small.targets[0].target.attr.value
                       for stmt in node.body.body if isinstance(stmt, cst.SimpleStatementLine)
                       for small in stmt.body
                       if isinstance(small, cst.Assign) and len(small.targets) == 1
                       and isinstance(small.targets[0].target, cst.Attribute)
                       and _is_self(small.targets[0].target.value)]
            if tested.intersection(written):
                found.extend(attr for attr in dict.fromkeys(written) if attr not in found)

    walk(fn, Visitor())
    return found


class _LazyProperty(cst.CSTTransformer):
    """In a lazy property or forward (not its nested functions): ``_mp_a = self.a`` at the top, ``self.a = v`` ->
    ``_mp_a = v`` + ``keep_cache(self, 'a', _mp_a)``, and reads of ``self.a`` read ``_mp_a``."""

    def __init__(self, attrs: list[str], keep: str) -> None:
        super().__init__()
        self.keep = keep  # the runtime helper's name (mp_framework.keep_cache)
        self.attrs = set(attrs)
        self.order = list(attrs)
        self.bound: set[str] = set()
        self.depth = 0
        self.sites = 0

    def visit_FunctionDef(self, node) -> bool:
        self.depth += 1
        if self.depth == 1:
            self.bound = set(self.attrs)
        return self.depth == 1

    def leave_FunctionDef(self, original_node, updated_node):
        self.depth -= 1
        if self.depth or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        self.sites += len(self.order)
        return _with_local_mirrors(updated_node, self.order)

    def visit_Lambda(self, node) -> bool:
        return False

    def leave_Attribute(self, original_node, updated_node):
        if _is_self(updated_node.value) and updated_node.attr.value in self.bound:
            return cst.Name(f"_mp_{updated_node.attr.value}")
        return updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        mirrors = []
        for before, small in zip(original_node.body, updated_node.body):
            if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                    and isinstance(small.targets[0].target, cst.Name) \
                    and isinstance(before.targets[0].target, cst.Attribute) \
                    and small.targets[0].target.value[4:] in self.bound:
                attr = small.targets[0].target.value[4:]
                mirrors.append(parse_statement(f"{self.keep}(self, {attr!r}, _mp_{attr})\n"))
        if not mirrors:
            return updated_node
        self.sites += len(mirrors)
        return cst.FlattenSentinel([updated_node, *mirrors])



_CASTS = frozenset({"to", "type", "type_as", "float", "double", "half", "bfloat16", "long", "int", "short", "bool",
                    "byte", "char", "cuda", "cpu", "contiguous", "detach", "astype"})
_PLACES = frozenset({"cuda", "cpu", "contiguous", "detach"})  # no dtype: the value itself


def _recasts(cls: cst.ClassDef, tracked: set[str], building: set[str]) -> dict[str, bool]:
    """Attributes every write of which outside ``__init__`` casts or moves the attribute itself (CLIP's attention:
    ``self.attn_mask = self.attn_mask.to(dtype=x.dtype, device=x.device) if self.attn_mask is not None else None``;
    ``self.freqs_cis = self.freqs_cis.to(h.device)``), mapped to whether a dtype may change (False: a device move,
    ``contiguous``, ``detach``). Such a write gives the value it read again, so a local carries it through the call
    and the write back is ``keep_cache`` (PyNative only): a static graph compiles the read of a tensor attribute it
    also writes as an interpreted value whose dtype later ops cannot infer ("negative dimensions are not allowed" in
    a LayerNorm after it, MindSpore 2.10), and there it casts the value ``__init__`` set on each call."""
    found: dict[str, bool] = {}
    refused: set[str] = set()
    for fn in cls.body.body:
        if not isinstance(fn, cst.FunctionDef) or fn.name.value in building:
            continue

        class Visitor(cst.CSTVisitor):
            def visit_Assign(self, node: cst.Assign) -> None:
                for target in node.targets:
                    hits: list = []
                    _targets(target.target, hits)
                    for hit in hits:
                        attr = hit.attr.value
                        dtype = _recast_value(node.value, attr) if len(node.targets) == 1 \
                            and target.target is hit else None
                        if dtype is None:
                            refused.add(attr)
                        else:
                            found[attr] = found.get(attr, False) or dtype

            def visit_AugAssign(self, node: cst.AugAssign) -> None:
                hits: list = []
                _targets(node.target, hits)
                refused.update(h.attr.value for h in hits)

            def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
                hits: list = []
                _targets(node.target, hits)
                refused.update(h.attr.value for h in hits)

        walk(fn, Visitor())
    return {a: d for a, d in found.items() if a in tracked and a not in refused}


def _recast_value(value, attr: str) -> bool | None:
    """For a value written to ``self.<attr>``: None unless it is the attribute itself cast or moved (a chain of
    ``_CASTS`` calls on ``self.<attr>``, also as ``<that> if self.<attr> is not None else None``); else whether a
    dtype may change."""
    if isinstance(value, cst.IfExp):
        test = value.test
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
                and _is_self_attr(test.left, attr) and isinstance(test.comparisons[0].comparator, cst.Name) \
                and test.comparisons[0].comparator.value == "None":
            op = test.comparisons[0].operator
            cast, other = (value.body, value.orelse) if isinstance(op, cst.IsNot) else \
                (value.orelse, value.body) if isinstance(op, cst.Is) else (None, None)
            if cast is not None and isinstance(other, cst.Name) and other.value == "None":
                return _recast_value(cast, attr)
        return None
    dtype = False
    seen = False
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in _CASTS:
        name = value.func.attr.value
        if name == "to":
            dtype = dtype or not all(_is_place(arg) for arg in value.args)
        elif name not in _PLACES:
            dtype = True
        seen = True
        value = value.func.value
    return dtype if seen and _is_self_attr(value, attr) else None


def _state_tuples(cls: cst.ClassDef, found: dict[int, str], remarks: dict[int, str]) -> None:
    """The statements ``out, self.h = f(x, self.h)`` of a model's methods (thesis/lstm's HAR_LSTM: ``lstm_out,
    self.hidden = self.lstm(x, self.hidden)``, ``self.hidden`` set by ``init_hidden`` before the call): state kept on
    self from one call to the next, written as an element of a tuple target and read in the same statement, and read
    nowhere else in the method. The state analysis says MP107 at the read (PyNative takes the previous call's value, a
    graph another); a graph also fails to compile the write itself (MindSpore 2.10: the tuple read back is
    "Tensor[Float64]", "the 'hx' must be Tuple"). The line binds a local ``_mp_h`` instead and keeps it on self with
    ``mp_framework.keep_cache`` (PyNative only), and the MP107 says what a graph reads. Only where the MP107 is said
    (``remarks`` holds the read)."""
    for method in cls.body.body:
        if not isinstance(method, cst.FunctionDef) or method.name.value == "__init__":
            continue
        lines: list[cst.SimpleStatementLine] = []
        reads: dict[str, list] = {}

        class Visitor(cst.CSTVisitor):
            def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
                lines.append(node)

            def visit_Attribute(self, node: cst.Attribute) -> None:
                if _is_self(node.value):
                    reads.setdefault(node.attr.value, []).append(node)

        walk(method, Visitor())
        for line in lines:
            if len(line.body) != 1 or not isinstance(line.body[0], cst.Assign) or len(line.body[0].targets) != 1 \
                    or not isinstance(line.body[0].targets[0].target, (cst.Tuple, cst.List)):
                continue
            assign = line.body[0]
            written = [e.value.attr.value for e in assign.targets[0].target.elements
                       if isinstance(e.value, cst.Attribute) and _is_self(e.value.value)]
            if len(written) != 1:
                continue
            attr = written[0]
            in_value: list = []

            class Reads(cst.CSTVisitor):
                def visit_Attribute(self, node: cst.Attribute) -> None:
                    if _is_self_attr(node, attr):
                        in_value.append(node)

            walk(assign.value, Reads())
            others = [n for n in reads.get(attr, ()) if n not in in_value
                      and not any(e.value is n for e in assign.targets[0].target.elements)]
            said = [n for n in in_value if id(n) in remarks]
            if len(in_value) != 1 or others or not said:
                continue
            found[id(line)] = attr
            shown = "construct" if method.name.value == "forward" else method.name.value
            remarks[id(said[0])] = (
                f"{shown} reads self.{attr} before writing it: PyNative takes the value the previous call left, a "
                f"static graph (GRAPH_MODE) the value self.{attr} held when it was compiled, on every call (its write "
                f"is kept in PyNative only: equal on the first call, different from the second on)")


def _is_self_attr(node, attr: str) -> bool:
    return isinstance(node, cst.Attribute) and _is_self(node.value) and node.attr.value == attr


def _is_place(arg: cst.Arg) -> bool:
    """An argument of ``.to(...)`` that names a device (or ``non_blocking``/``copy``), not a dtype."""
    if arg.keyword is not None:
        return arg.keyword.value in ("device", "non_blocking", "copy", "memory_format")
    value = arg.value
    if isinstance(value, cst.Attribute):
        return value.attr.value == "device"
    if isinstance(value, cst.SimpleString):
        return True
    if isinstance(value, cst.Call):
        return last_name(value.func) == "device"
    return isinstance(value, cst.Name) and value.value == "device"


def _cache_buffers(cls: cst.ClassDef, found: set, methods: dict, remarks: dict) -> None:
    """``self.register_buffer("<name>", value, ...)`` statements in a method other than ``__init__`` which also
    tests ``self.<name> is None`` / ``is not None``, or reads ``self.<name>`` in the test of an ``if``: a cache rebuilt
    when missing, too short or stale (``if self._cached_basis.numel() == 0 or self._cached_length != length``), and
    ``self.<name> = value`` statements for a buffer the class keeps as a MindSpore buffer (BufferTransform writes
    them as ``register_buffer``). ``methods`` gets, per method, the names assigned so and the names it reads again
    after registering them (:class:`_BufferLocals`). Each such site gets MP107 in ``remarks``: a graph builds the
    value on each call, the same value only when it depends on sizes and settings alone."""
    kept = kept_buffer_names(cls)
    for fn in cls.body.body:
        if not isinstance(fn, cst.FunctionDef) or fn.name.value == "__init__":
            continue
        tested: set[str] = set()
        calls: list = []
        later: set[str] = set()  # names read after a register_buffer of them (in source order)
        assigned: set[str] = set()  # kept buffers assigned (self.<name> = value)
        sites: list = []  # (node the remark goes on, buffer name) for the assignments

        class Visitor(cst.CSTVisitor):
            def __init__(self) -> None:
                super().__init__()
                self.registered: set[str] = set()
                self.inside: set[int] = set()  # ids of the register_buffer calls' argument attributes

            def visit_If(self, node: cst.If) -> None:
                class Reads(cst.CSTVisitor):
                    def visit_Attribute(self, inner: cst.Attribute) -> None:
                        if _is_self(inner.value):
                            tested.add(inner.attr.value)

                walk(node.test, Reads())

            def visit_Comparison(self, node: cst.Comparison) -> None:
                if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot)) \
                        and isinstance(node.comparisons[0].comparator, cst.Name) \
                        and node.comparisons[0].comparator.value == "None" \
                        and isinstance(node.left, cst.Attribute) and _is_self(node.left.value):
                    tested.add(node.left.attr.value)

            def visit_Expr(self, node: cst.Expr) -> None:
                call = node.value
                if _self_call(call) == "register_buffer" and call.args and call.args[0].keyword is None \
                        and isinstance(call.args[0].value, cst.SimpleString):
                    calls.append((call, call.args[0].value.evaluated_value))

            def leave_Expr(self, node: cst.Expr) -> None:
                if calls and calls[-1][0] is node.value:
                    self.registered.add(calls[-1][1])

            def leave_Assign(self, node: cst.Assign) -> None:
                target = node.targets[0].target if len(node.targets) == 1 else None
                if isinstance(target, cst.Attribute) and _is_self(target.value) and target.attr.value in kept:
                    assigned.add(target.attr.value)
                    self.registered.add(target.attr.value)
                    sites.append((target, target.attr.value))

            def visit_Attribute(self, node: cst.Attribute) -> None:
                if _is_self(node.value) and node.attr.value in self.registered:
                    later.add(node.attr.value)

        walk(fn, Visitor())
        found.update(id(call) for call, name in calls if name in tested)
        assigned &= tested
        shown = "construct" if fn.name.value == "forward" else fn.name.value
        for node, name in [*calls, *sites]:
            if name in tested:
                remarks.setdefault(id(node), (
                    f"{shown} caches self.{name} in a buffer: PyNative keeps it from one call to the next, a static "
                    f"graph (GRAPH_MODE) keeps no buffer registered there and builds it again on each call (the "
                    f"same value when it depends only on sizes and settings, not on an earlier input)"))
        names = sorted({name for call, name in calls if name in tested} | assigned)
        if assigned or any(name in later for name in names):
            methods[id(fn)] = (sorted(assigned), [name for name in names if name in later])


class _BufferLocals(cst.CSTTransformer):
    """In a method caching a buffer: ``self.register_buffer("b", v, ...)`` that BufferTransform wrote for an
    assignment ``self.b = v`` -> ``keep_buffer(self, "b", v, ...)`` (``assigned``); and in a method reading the
    buffer again after registering it (``return self.b``, ``names``): ``_mp_b = self.b`` at the top, the call ->
    ``_mp_b = keep_buffer(self, "b", v, ...)``, and reads of ``self.b`` read ``_mp_b``. A graph keeps no buffer
    registered in ``construct`` (keep_buffer registers in PyNative only), so a read of ``self.b`` there would give
    what ``__init__`` registered; the local holds the value just built, in both modes (in PyNative the very tensor
    the buffer holds)."""

    def __init__(self, assigned: list[str], names: list[str], keep: str) -> None:
        super().__init__()
        self.assigned = set(assigned)
        self.names = names
        self.keep = keep  # the runtime helper's name as the file reads it (mp_framework.keep_buffer)
        self.depth = 0
        self.sites = 0

    def visit_FunctionDef(self, node) -> bool:
        self.depth += 1
        return self.depth == 1

    def leave_FunctionDef(self, original_node, updated_node):
        self.depth -= 1
        if self.depth or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        self.sites += len(self.names)
        return _with_local_mirrors(updated_node, self.names)

    def visit_Lambda(self, node) -> bool:
        return False

    def leave_Attribute(self, original_node, updated_node):
        if _is_self(updated_node.value) and updated_node.attr.value in self.names:
            return cst.Name(f"_mp_{updated_node.attr.value}")
        return updated_node

    def leave_Expr(self, original_node, updated_node):
        call = updated_node.value
        if not isinstance(call, cst.Call):
            return updated_node
        if _self_call(call) == "register_buffer" and call.args and isinstance(call.args[0].value, cst.SimpleString) \
                and call.args[0].value.evaluated_value in self.assigned:
            self.sites += 1
            call = call.with_changes(func=parse_expression(self.keep), args=[cst.Arg(cst.Name("self")), *call.args])
            updated_node = updated_node.with_changes(value=call)
        if cst.Module([]).code_for_node(call.func) == self.keep and len(call.args) > 1 \
                and isinstance(call.args[1].value, cst.SimpleString) \
                and call.args[1].value.evaluated_value in self.names:
            self.sites += 1
            return cst.Assign(targets=[cst.AssignTarget(cst.Name(f"_mp_{call.args[1].value.evaluated_value}"))],
                              value=call)
        return updated_node


def _with_local_mirrors(function: cst.FunctionDef, names) -> cst.FunctionDef:
    """``function`` with ``_mp_NAME = self.NAME`` for each name at the top of its body (after the docstring): the
    locals its ``self.NAME`` reads were rewritten to."""
    body = list(function.body.body)
    head = 0
    if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
            and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        head = 1  # after the docstring
    body[head:head] = [parse_statement(f"_mp_{name} = self.{name}\n") for name in names]
    return function.with_changes(body=function.body.with_changes(body=body))
