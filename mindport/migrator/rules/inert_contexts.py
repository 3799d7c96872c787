"""The converter rule InertContextTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/inert_contexts.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, GraphMethodRule

# what the tables map to a context that changes nothing (the tables say which torch names these are: sdpa_kernel,
# sdp_kernel, autocast in its forms), and Python's own
_INERT_TARGETS = frozenset({"mindport.runtime.framework.kernel_choice", "mindport.runtime.training.autocast"})
_INERT_PYTHON = frozenset({"contextlib.nullcontext"})


class InertContextTransform(GraphMethodRule):
    """In a model's methods, a ``with`` block whose context changes nothing in MindSpore -> the block's body alone:
    torch's attention-kernel choice (``sdpa_kernel(backends)``, ``torch.backends.cuda.sdp_kernel(...)``), autocast
    (which runs in full precision here: ``autocast("cuda", enabled=False)``), ``contextlib.nullcontext()``, also
    when the context is a name the method binds once to one of them, a ``partial`` of one, or a choice between two
    (vector-quantize-pytorch's FSQ: ``ctx = partial(autocast, "cuda", enabled=False) if force_f32 else nullcontext``
    then ``with ctx():``). Such a binding read only by those blocks goes with them.

    The tables map these to ``mp_framework.kernel_choice`` and ``mp_train.autocast``, context managers that do
    nothing. A static graph (GRAPH_MODE, ``@jit``) compiles no Python context manager, nor a ``partial`` of a class
    ("For 'partial', input[0] should be Function, but got TypeType", MindSpore 2.10): lucidrains' ``Attend`` and
    FSQ/LFQ failed there. The body alone compiles and computes the same. Only a ``with`` of one item and no ``as``
    target; outside a model's methods the block keeps its form (the runtime's context manager runs in PyNative). A
    binding goes only when nothing else reads it and its value is an inert context or does nothing else when
    evaluated (names, attributes, literals, lists of them: ``backends = [SDPBackend.MATH]``).
    """

    EXAMPLES = (
        Example(
            before="""
                from contextlib import nullcontext
                from functools import partial

                import torch
                import torch.nn as nn
                import torch.nn.functional as F
                from torch.amp import autocast
                from torch.nn.attention import SDPBackend, sdpa_kernel


                class Attend(nn.Module):
                    def __init__(self, full_precision=True):
                        super().__init__()
                        self.full_precision = full_precision

                    def forward(self, q, k, v):
                        backends = [SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]
                        # the kernels torch may use
                        with sdpa_kernel(backends):
                            out = F.scaled_dot_product_attention(q, k, v)
                        context = partial(autocast, "cuda", enabled=False) if self.full_precision else nullcontext
                        with context():
                            out = out * 2
                        return out


                def attend(q, k, v):
                    with sdpa_kernel([SDPBackend.MATH]):
                        return F.scaled_dot_product_attention(q, k, v)
            """,
            after="""
                from contextlib import nullcontext
                from functools import partial

                from mindspore import nn
                from mindport.runtime import nn_functional as mp_F
                from mindport.runtime import framework as mp_framework


                class Attend(nn.Cell):
                    def __init__(self, full_precision=True):
                        super().__init__()
                        self.full_precision = full_precision

                    def construct(self, q, k, v):
                        # the kernels torch may use
                        out = mp_F.scaled_dot_product_attention(q, k, v)
                        out = out * 2
                        return out


                def attend(q, k, v):
                    with mp_framework.kernel_choice(backends=[mp_framework.SDPBackend.MATH]):
                        return mp_F.scaled_dot_product_attention(q, k, v)
            """,
            note="In the model the blocks' bodies stand alone and the context's binding goes; a function outside one "
                 "keeps the (inert) block.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx, module_classes)
        self._bindings: list[dict[str, list[cst.BaseExpression]]] = []  # per function: name -> values assigned
        self._loads: list[dict[str, int]] = []  # per function: name -> times it appears, assignments' targets too
        self._dropped: list[dict[str, int]] = []  # per function: name -> its appearances in the blocks flattened

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        bindings: dict[str, list] = {}
        loads: dict[str, int] = {}
        for found in _walk(node.body):
            if isinstance(found, cst.Assign) and len(found.targets) == 1 \
                    and isinstance(found.targets[0].target, cst.Name):
                bindings.setdefault(found.targets[0].target.value, []).append(found.value)
            elif isinstance(found, cst.Name):
                loads[found.value] = loads.get(found.value, 0) + 1
        for param in (*node.params.params, *node.params.kwonly_params, *node.params.posonly_params):
            bindings.setdefault(param.name.value, []).append(None)  # a parameter: any value
        self._bindings.append(bindings)
        self._loads.append(loads)
        self._dropped.append({})

    def leave_FunctionDef(self, original_node, updated_node):
        bindings, loads, dropped = self._bindings.pop(), self._loads.pop(), self._dropped.pop()
        # a binding read only by the blocks flattened (its target is one appearance, each block's read another)
        gone = {name for name, n in dropped.items()
                if len(bindings.get(name, ())) == 1 and bindings[name][0] is not None and loads.get(name, 0) == n + 1
                and (self._factory(bindings[name][0]) or self._context(bindings[name][0]) or _pure(bindings[name][0]))}
        if gone:
            updated_node = updated_node.visit(_DropBindings(gone))
        return super().leave_FunctionDef(original_node, updated_node)

    def leave_With(self, original_node, updated_node):
        if not self.compiled or len(original_node.items) != 1 or original_node.items[0].asname is not None \
                or not isinstance(updated_node.body, cst.IndentedBlock) or not updated_node.body.body:
            return updated_node
        item = original_node.items[0].item
        if not self._context(item):
            return updated_node
        for found in _walk(item):
            if isinstance(found, cst.Name):
                self._dropped[-1][found.value] = self._dropped[-1].get(found.value, 0) + 1
        body = list(updated_node.body.body)
        body[0] = body[0].with_changes(leading_lines=[*updated_node.leading_lines, *body[0].leading_lines])
        self.ctx.converted_sites += 1
        return cst.FlattenSentinel(body)

    # ---------------------------------------------------------------------------------------------- what is inert
    def _named(self, expr) -> bool:
        """A name for an inert context's class or function (``sdpa_kernel``, ``torch.amp.autocast``,
        ``nullcontext``)."""
        if self.scope.resolve(expr) in _INERT_PYTHON:
            return True
        qual = self.scope.resolve_torch(expr)
        entry = self.ctx.registry.lookup(qual) if qual is not None else None
        return entry is not None and entry.resolve(self.ctx.options.target)[0] in _INERT_TARGETS

    def _factory(self, expr, depth=0) -> bool:
        """Calling it gives an inert context: its name, a ``partial`` of one, a choice of two, a name bound once to
        one in the method."""
        if depth > 4:
            return False
        if isinstance(expr, (cst.Name, cst.Attribute)) and self._named(expr):
            return True
        if isinstance(expr, cst.Call) and self.scope.resolve(expr.func) == "functools.partial" and expr.args \
                and expr.args[0].keyword is None and not expr.args[0].star:
            return self._factory(expr.args[0].value, depth + 1)
        if isinstance(expr, cst.IfExp):
            return self._factory(expr.body, depth + 1) and self._factory(expr.orelse, depth + 1)
        bound = self._bound(expr)
        return bound is not None and self._factory(bound, depth + 1)

    def _context(self, expr, depth=0) -> bool:
        """An inert context object: a call of a factory, a choice of two, a name bound once to one in the method."""
        if depth > 4:
            return False
        if isinstance(expr, cst.Call):
            return self._factory(expr.func, depth + 1)
        if isinstance(expr, cst.IfExp):
            return self._context(expr.body, depth + 1) and self._context(expr.orelse, depth + 1)
        bound = self._bound(expr)
        return bound is not None and self._context(bound, depth + 1)

    def _bound(self, expr):
        """The one value a local name is bound to in the method (None: not a local, or bound more than once)."""
        if not isinstance(expr, cst.Name) or not self._bindings:
            return None
        values = self._bindings[-1].get(expr.value, ())
        return values[0] if len(values) == 1 else None


def _pure(expr) -> bool:
    """Evaluating it does nothing else: names, attributes of them, literals, and lists or tuples of those."""
    if isinstance(expr, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(expr, cst.Attribute):
        return _pure(expr.value)
    if isinstance(expr, (cst.List, cst.Tuple)):
        return all(isinstance(e, cst.Element) and _pure(e.value) for e in expr.elements)
    return False


def _walk(node):
    """Every node below ``node``, nested functions and classes left out (their names are theirs)."""
    stack = [node] if not isinstance(node, (list, tuple)) else list(node)
    while stack:
        current = stack.pop()
        yield current
        for child in current.children:
            if not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                stack.append(child)


class _DropBindings(cst.CSTTransformer):
    """Removes ``name = value`` statements of the names given (nested functions left alone)."""

    def __init__(self, names: set[str]) -> None:
        super().__init__()
        self._names = names
        self._depth = 0

    def visit_FunctionDef(self, node) -> bool:
        self._depth += 1
        return self._depth == 1

    def leave_FunctionDef(self, original_node, updated_node):
        self._depth -= 1
        return updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if len(updated_node.body) == 1 and isinstance(updated_node.body[0], cst.Assign) \
                and len(updated_node.body[0].targets) == 1 \
                and isinstance(updated_node.body[0].targets[0].target, cst.Name) \
                and updated_node.body[0].targets[0].target.value in self._names:
            return cst.RemoveFromParent()
        return updated_node
