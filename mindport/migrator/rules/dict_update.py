"""The converter rule DictUpdateTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/dict_update.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, Rule, forward_methods
from mindport.migrator.walk import walk


class DictUpdateTransform(Rule):
    """In a model's methods, ``kwargs.update(context=normed)`` on the method's ``**kwargs`` (or a dict it builds)
    becomes item assignments: ``kwargs['context'] = normed``.

    Layers that forward their keyword arguments replace one of them before passing them on (perceiver's ``PreNorm``:
    ``kwargs.update(context=self.norm_context(kwargs['context']))``, then ``self.fn(x, **kwargs)``). MindSpore's
    static graph (GRAPH_MODE, ``@jit``) loses the updated dict's keys at the call ("Got an unexpected keyword
    argument 'context'"); item assignments compile, with the same dict in Python. Only keyword arguments, or one dict
    display with string keys, on a dict the method owns; ``pbar.update(1)`` and the like are other objects' methods
    and are left alone.

    ``opts.setdefault('scale', 2.0)`` on such a dict, a statement or the value of ``y = ...``, becomes ``if 'scale'
    not in opts: opts['scale'] = 2.0`` (then ``y = opts['scale']``): GRAPH_MODE left the dict unchanged by
    setdefault ("The key 'scale' does not exist in the dict"). Only a key read twice safely (a literal, a name, an
    attribute of one); the default is evaluated only when the key is missing, as the dict ends the same.
    """

    EXAMPLES = (
        Example(
            before="""
                import torch.nn as nn


                class PreNorm(nn.Module):
                    def __init__(self, dim, fn):
                        super().__init__()
                        self.norm = nn.LayerNorm(dim)
                        self.fn = fn

                    def forward(self, x, **kwargs):
                        if 'context' in kwargs:
                            kwargs.update(context=self.norm(kwargs['context']))
                        extra = {}
                        extra.update({'scale': 2})
                        shift = extra.setdefault('shift', 1)
                        return self.fn(self.norm(x), **kwargs) * extra['scale'] + shift
            """,
            after="""
                from mindspore import nn


                class PreNorm(nn.Cell):
                    def __init__(self, dim, fn):
                        super().__init__()
                        self.norm = nn.LayerNorm(normalized_shape=(tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)), epsilon=1e-05)
                        self.fn = fn

                    def construct(self, x, **kwargs):
                        if 'context' in kwargs:
                            kwargs['context'] = self.norm(kwargs['context'])
                        extra = {}
                        extra['scale'] = 2
                        if 'shift' not in extra:
                            extra['shift'] = 1
                        shift = extra['shift']
                        return self.fn(self.norm(x), **kwargs) * extra['scale'] + shift
            """,
            note="The forwarded keyword replaced by an item assignment, and a setdefault by a test and one, which a "
                 "static graph keeps.",
        ),
    )

    def __init__(self, ctx, module_classes: set[str]) -> None:
        super().__init__(ctx)
        self._module_classes = module_classes
        self._methods: set[int] = set()
        self._dicts: list[frozenset[str] | None] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._methods |= forward_methods(node, self._module_classes)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._dicts.append(_own_dicts(node) if id(node) in self._methods else None)

    def leave_FunctionDef(self, original_node, updated_node):
        self._dicts.pop()
        return updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        dicts = self._dicts[-1] if self._dicts else None
        if not dicts or len(updated_node.body) != 1:
            return updated_node
        setdefault = _setdefault(updated_node.body[0], dicts)
        if setdefault is not None:
            name, key, value, target = setdefault
            item = cst.Subscript(value=name, slice=[cst.SubscriptElement(cst.Index(key.deep_clone()))])
            test = cst.Comparison(key, [cst.ComparisonTarget(cst.NotIn(), name.deep_clone())])
            lines = [cst.If(test=test, body=cst.IndentedBlock([cst.SimpleStatementLine(
                [cst.Assign([cst.AssignTarget(item)], value)])]), leading_lines=updated_node.leading_lines)]
            if target is not None:
                lines.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], item.deep_clone())]))
            self.ctx.converted_sites += 1
            return cst.FlattenSentinel(lines)
        if not isinstance(updated_node.body[0], cst.Expr):
            return updated_node
        call = updated_node.body[0].value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "update"
                and isinstance(call.func.value, cst.Name) and call.func.value.value in dicts and call.args):
            return updated_node
        pairs = _pairs(call.args)
        if pairs is None:
            return updated_node
        name = call.func.value
        lines = [cst.SimpleStatementLine([cst.Assign(
            [cst.AssignTarget(cst.Subscript(value=name, slice=[cst.SubscriptElement(cst.Index(key))]))], value)],
            leading_lines=updated_node.leading_lines if i == 0 else [])
            for i, (key, value) in enumerate(pairs)]
        self.ctx.converted_sites += 1
        return cst.FlattenSentinel(lines)


def _setdefault(statement, dicts: frozenset[str]):
    """``d.setdefault(k[, v])`` as a statement, or as the value of ``y = ...`` (one name): (d, k, v, y or None) when
    ``d`` is one of ``dicts`` and ``k`` may be read twice; None otherwise."""
    target = None
    if isinstance(statement, cst.Assign) and len(statement.targets) == 1 \
            and isinstance(statement.targets[0].target, cst.Name):
        target, call = statement.targets[0].target, statement.value
    elif isinstance(statement, cst.Expr):
        call = statement.value
    else:
        return None
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "setdefault"
            and isinstance(call.func.value, cst.Name) and call.func.value.value in dicts
            and 1 <= len(call.args) <= 2 and all(a.keyword is None and not a.star for a in call.args)
            and _plain_key(call.args[0].value)):
        return None
    value = call.args[1].value if len(call.args) == 2 else cst.Name("None")
    return call.func.value, call.args[0].value, value, target


def _plain_key(node) -> bool:
    """A key that reads the same twice: a literal, a name, or an attribute of one (``self.key``)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, (cst.SimpleString, cst.Integer, cst.Float, cst.Name))


def _pairs(args) -> list | None:
    """``update(a=1, b=2)`` or ``update({'a': 1})``: the (key, value) pairs, in order; None for anything else."""
    if all(a.keyword is not None and not a.star for a in args):
        return [(cst.SimpleString(repr(a.keyword.value)), a.value) for a in args]
    if len(args) == 1 and args[0].keyword is None and not args[0].star and isinstance(args[0].value, cst.Dict) \
            and all(isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                    for e in args[0].value.elements):
        return [(e.key, e.value) for e in args[0].value.elements]
    return None


def _own_dicts(node: cst.FunctionDef) -> frozenset[str]:
    """The method's ``**kwargs`` and the names it binds to a dict display or comprehension."""
    names = set()
    if isinstance(node.params.star_kwarg, cst.Param):
        names.add(node.params.star_kwarg.name.value)

    class Visitor(cst.CSTVisitor):
        def visit_Assign(self, assign: cst.Assign) -> None:
            if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name) \
                    and isinstance(assign.value, (cst.Dict, cst.DictComp)):
                names.add(assign.targets[0].target.value)

        def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
            return inner is node

    walk(node, Visitor())
    return frozenset(names)
