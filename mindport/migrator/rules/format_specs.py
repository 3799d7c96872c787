"""The converter rule FormatSpecTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/format_specs.md shows both."""
from __future__ import annotations

import string

import libcst as cst

from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.scopes import receiver_kind
from mindport.migrator.syntax import code_of
from mindport.migrator.walk import parse_expression

# calls whose value is a Python number or string in both frameworks: never a tensor
_PYTHON_CALLS = frozenset({"len", "int", "float", "round", "str", "bool", "ord", "repr", "format"})
_PYTHON_METHODS = frozenset({"item", "tolist", "numel", "dim", "size", "format", "join", "upper", "lower"})


def spec_arguments(call: cst.Call, scope) -> set[int]:
    """The positions of ``call``'s arguments formatted with a spec: ``"{:.6f} {}".format(a, b)`` -> {0},
    ``format(x, ".2f")`` -> {0}; fields that read into a value (``{0.x}``) or convert it (``!r``) are not counted."""
    func = call.func
    if isinstance(func, cst.Name) and func.value == "format" and scope.resolve(func) is None:
        spec = call.args[1].value if len(call.args) == 2 and call.args[1].keyword is None else None
        given = isinstance(spec, cst.SimpleString) and spec.evaluated_value or spec is not None and not isinstance(
            spec, cst.SimpleString)
        return {0} if given and call.args[0].keyword is None and not call.args[0].star else set()
    if not (isinstance(func, cst.Attribute) and func.attr.value == "format"
            and isinstance(func.value, (cst.SimpleString, cst.ConcatenatedString))):
        return set()
    text = func.value.evaluated_value  # None for a concatenation holding an f-string
    if not isinstance(text, str) or any(a.star for a in call.args):
        return set()
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError:
        return set()
    positional = [i for i, a in enumerate(call.args) if a.keyword is None]
    keywords = {a.keyword.value: i for i, a in enumerate(call.args) if a.keyword is not None}
    found: set[int] = set()
    auto = 0
    for _literal, name, spec, conversion in fields:
        if name is None:
            continue
        if name == "":
            index, auto = auto, auto + 1
            target = positional[index] if index < len(positional) else None
        elif name.isdigit():
            target = positional[int(name)] if int(name) < len(positional) else None
        elif name.isidentifier():
            target = keywords.get(name)
        else:  # {0.x}, {d[k]}: the field reads into the value
            target = None
        if target is not None and spec and conversion is None:
            found.add(target)
    return found


class FormatSpecTransform(Rule):
    """A value formatted with a spec, ``f"{loss:.4f}"``, ``"{:.6f}".format(loss)`` or ``format(loss, ".4f")``,
    becomes
    ``mp_tensor.formattable(loss)`` where it may be a tensor.

    torch formats a 0-d tensor with a spec as its Python number (``Tensor.__format__`` calls ``item()``), so training
    scripts print ``loss`` itself; MindSpore's Tensor refuses any spec ("unsupported format string passed to
    Tensor.__format__"), so the converted script stopped at its first progress line. ``formattable`` hands a 0-d
    tensor's number to the spec and returns anything else unchanged. Values known to be Python numbers or strings
    (literals, ``len(...)``, ``float(...)``, ``x.item()``, sizes) are left as written, as are fields without a spec,
    fields with a conversion (``!r``) and ``.format`` fields that name an attribute or an item (``{0.x}``).
    """

    EXAMPLES = (
        Example(
            before="""
                import torch


                def report(epoch, loss, correct, total, lr, batch):
                    print(f"epoch {epoch:03d} loss {loss:.4f} acc {100.0 * correct / total:.2f} n={len(batch):d}")
                    print("{:.6f} {} {lr:.1e}".format(loss, epoch, lr=lr))
                    print(f"{loss.item():.4f} {loss!r:>10}", format(loss, ".3e"))
            """,
            after="""
                from mindport.runtime import tensor as mp_tensor


                def report(epoch, loss, correct, total, lr, batch):
                    print(f"epoch {mp_tensor.formattable(epoch):03d} loss {mp_tensor.formattable(loss):.4f} acc {mp_tensor.formattable(100.0 * correct / total):.2f} n={len(batch):d}")
                    print("{:.6f} {} {lr:.1e}".format(mp_tensor.formattable(loss), epoch, lr=mp_tensor.formattable(lr)))
                    print(f"{loss.item():.4f} {loss!r:>10}", format(mp_tensor.formattable(loss), ".3e"))
            """,
            note="A value the rule cannot tell from a tensor goes through formattable (a Python number comes back as "
                 "it is); .item(), len() and fields without a spec or with !r are left alone.",
        ),
    )

    def leave_FormattedStringExpression(self, original_node, updated_node):
        if not updated_node.format_spec or updated_node.conversion is not None \
                or not self._may_be_tensor(original_node.expression):
            return updated_node
        return updated_node.with_changes(expression=self._wrap(updated_node.expression))

    def leave_Call(self, original_node, updated_node):
        wrap = spec_arguments(original_node, self.scope)
        args = list(updated_node.args)
        changed = False
        for i in sorted(wrap):
            if self._may_be_tensor(original_node.args[i].value):
                args[i] = args[i].with_changes(value=self._wrap(args[i].value))
                changed = True
        return updated_node.with_changes(args=args) if changed else updated_node

    def _wrap(self, expr):
        self.ctx.converted_sites += 1
        return parse_expression(f"{self.ctx.alias_for('mindport.runtime.tensor')}.formattable({code_of(expr)})")

    def _may_be_tensor(self, expr) -> bool:
        if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return False
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Name) and expr.func.value in _PYTHON_CALLS:
                return False
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _PYTHON_METHODS:
                return False
        return receiver_kind(expr, self.scope) in ("tensor", "other")
