"""Native factories: a torch class called with arguments known only at run time (``nn.Linear(*args, **kwargs)`` in
a helper such as ``linear(*args, **kwargs)``) is built by a function the converter writes into the file, with
torch's parameters and defaults, whose body is the entry's own conversion of a call passing every parameter by name:

    def make_linear(in_features, out_features, bias=True, device=None, dtype=None):
        \"\"\"torch.nn.Linear's parameters, building MindSpore's nn.Dense.\"\"\"
        return nn.Dense(in_channels=in_features, out_channels=out_features, has_bias=bias)

It takes what torch's class takes, positionally or by keyword, so any call site keeps working; the converter writes
one only where that conversion is static for every value (no parameter needs the runtime adapter's decision, none is
unsupported) and its default construction names no ``mindport.runtime`` helper. Sizes and counts known only when it
is called (``stride=[1]``, a numpy integer: MindSpore takes a plain int or a full tuple) are read first, by the
adapter's own code (sizes_statement, ``mp_adapt.layer_sizes``). A torch function kept as a value (``dict(relu=F.relu)``)
gets the same kind of definition, ``def torch_relu(input, inplace=False)``. The rule that uses them is
TableCallTransform; this module only writes the definitions and places them.
"""
from __future__ import annotations

import ast
import re

import libcst as cst

from mindport.mappings import Entry
from mindport.mappings.arguments import sized_parameters
from mindport.migrator.syntax import code_of
from mindport.migrator.walk import parse_statement, read


def factory_name(entry: Entry, taken) -> str:
    """``torch.nn.Conv3d`` -> ``make_conv3d`` (``make_conv3d_`` ... when the file already uses the name)."""
    name = "make_" + entry.torch.rsplit(".", 1)[-1].lower()
    while name in taken:
        name += "_"
    return name


def factory_parameters(entry: Entry, default=lambda text: text) -> str | None:
    """torch's parameter list as source (``in_channels, out_channels, kernel_size, stride=1, ...``); None when the
    signature takes ``*args`` or ``**kwargs`` (no fixed parameters to bind), or when ``default`` (a default's source
    -> its MindSpore source, or None: torch_default's job) cannot write one."""
    params = entry.signature or ()
    if not params or any(p.kind in ("var_positional", "var_keyword") for p in params):
        return None
    out, star = [], False
    for p in params:
        if p.kind == "keyword_only" and not star:
            out.append("*")
            star = True
        value = None if p.default is None else default(p.default)
        if p.default is not None and value is None:
            return None
        out.append(p.name if p.default is None else f"{p.name}={value}")
    return ", ".join(out)


def torch_default(entry: Entry, text: str, convert) -> str | None:
    """A default of torch's signature as MindSpore source: a literal as written; a torch name (``torch.long``,
    ``torch.strided``, ``ReduceOp.SUM`` written as torch's own signature writes it, in the entry's module: all_reduce's
    ``op=ReduceOp.SUM`` is ``torch.distributed.ReduceOp.SUM``) through its own attribute entry (``convert``: a torch
    name -> source, or None when no entry maps it); None when neither (no definition is written: the runtime
    adapter takes the value). Written verbatim, such a default was a NameError on import (``ReduceOp``) or kept torch
    imported (``torch.strided``)."""
    try:
        ast.literal_eval(text)
        return text
    except (ValueError, SyntaxError):
        pass
    if not re.fullmatch(r"[A-Za-z_][\w.]*", text):
        return None
    qualified = text if text.startswith("torch.") else f"{entry.torch.rsplit('.', 1)[0]}.{text}"
    return convert(qualified)


def sizes_statement(entry: Entry, helper: str) -> str | None:
    """The first statement of a factory or ``__init__`` taking torch's parameters at run time (``stride=[1]`` decoded
    from a config, ``np.prod(ks)``): those parameters read as the runtime adapter reads them, one implementation
    (``helper``: mindport.runtime.adapt.layer_sizes) so ``kernel_size, stride = mp_adapt.layer_sizes(kernel_size=
    kernel_size, stride=stride)``; None when the entry has no such parameter."""
    names = sized_parameters(entry)
    if not names:
        return None
    targets = ", ".join(names) if len(names) > 1 else f"({names[0]},)"
    return f"{targets} = {helper}({', '.join(f'{n}={n}' for n in names)})"


def factory_def(name: str, entry: Entry, parameters: str, body: cst.BaseExpression, built: str,
                branches=(), sizes: str | None = None) -> cst.FunctionDef:
    """The definition: torch's parameters, a docstring naming both classes, ``return <MindSpore construction>``;
    ``branches``, (condition, construction or a ``raise`` statement as source) each, come first: a parameter whose
    value picks another class (``padding_mode``), decided when the factory is called; ``sizes``
    (sizes_statement) before them."""
    owner = "" if built.startswith("mp_") else "MindSpore's "  # a runtime target (mp_optim.SGD) is not MindSpore's
    doc = f"{entry.torch}'s parameters, {'calling' if entry.kind == 'function' else 'building'} {owner}{built}"
    others = [f"{c}: {code_of(b.func)}" for c, b in branches if not isinstance(b, str)]
    doc += f" ({'; '.join(others)})." if others else "."
    lines = [f"def {name}({parameters}):", f'    """{doc}"""']
    if sizes:
        lines.append(f"    {sizes}")
    for condition, branch in branches:
        lines += [f"    if {condition}:", f"        {branch if isinstance(branch, str) else 'return ' + code_of(branch)}"]
    lines.append(f"    return {code_of(body)}")
    return parse_statement("\n".join(lines) + "\n")


def base_init(entry: Entry, parameters: str, built: cst.Call, sizes: str | None = None) -> cst.FunctionDef:
    """The ``__init__`` of a class whose base is MindSpore's class (``class GroupNorm32(nn.GroupNorm)``): torch's
    parameters, handed to the base bound statically, so the class is built with torch's arguments as before;
    ``sizes`` (sizes_statement) first."""
    call = built.with_changes(func=cst.parse_expression("super().__init__"))
    first = f"    {sizes}\n" if sizes else ""
    return parse_statement(f'def __init__(self, {parameters}):\n    """{entry.torch}\'s parameters."""\n'
                           f'{first}    {code_of(call)}\n')


def value_class_name(entry: Entry, taken) -> str:
    """``torch.nn.LayerNorm`` -> ``TorchLayerNorm`` (``TorchLayerNorm_`` ... when the file already uses the name)."""
    return fresh_name("Torch" + entry.torch.rsplit(".", 1)[-1], taken)


def fresh_name(name: str, taken) -> str:
    """``name``, or ``name_`` ... when the file already uses it."""
    while name in taken:
        name += "_"
    return name


def value_metaclass_def(name: str) -> cst.ClassDef:
    """The metaclass of a file's value classes (value_class_def): ``isinstance(m, TorchLayerNorm)`` (a value tested,
    ``isinstance(self.norm, norm_layer)``) holds for every MindSpore LayerNorm, as torch's ``isinstance(m,
    nn.LayerNorm)`` does for every LayerNorm, whichever way it was built; the class compares equal to MindSpore's
    and hashes as it does (``type(m) == TorchLayerNorm``, ``type(m) in {...}``: the layers it builds are MindSpore's
    class itself); a class derived from a value class tests and compares as any class does. Its signature is torch's
    (``inspect.signature(TorchBatchNorm2d)``: the ``__init__``'s parameters, not ``__new__``'s ``*args, **kwargs``):
    code that filters a configuration by the class's parameters (efficientvit's ``build_kwargs_from_config(kwargs,
    norm_cls)``) kept none of them. Its ``__name__`` is torch's (``_mp_torch_name``: ``BatchNorm2d``, not
    ``TorchBatchNorm2d``): code that looks a class up by its name (timm's ``get_norm_act_layer``:
    ``_NORM_TO_NORM_ACT_MAP[norm_layer.__name__.lower()]``) finds torch's; ``__qualname__`` stays the file's name,
    so the class is still found where it is defined (pickle)."""
    return parse_statement(
        f"class {name}(type):\n"
        f'    """isinstance, issubclass and == of a torch layer class used as a value: those of MindSpore\'s class."""\n\n'
        "    def __init__(cls, name, bases, namespace, **kwargs):\n"
        "        super().__init__(name, bases, namespace, **kwargs)\n"
        "        if '_mp_torch_name' in namespace:\n"
        "            cls.__name__ = namespace['_mp_torch_name']\n\n"
        "    def __instancecheck__(cls, obj):\n"
        "        if '_mp_value_class' in vars(cls):\n"
        "            return isinstance(obj, cls.__bases__[0])\n"
        "        return super().__instancecheck__(obj)\n\n"
        "    def __subclasscheck__(cls, sub):\n"
        "        if '_mp_value_class' in vars(cls):\n"
        "            return issubclass(sub, cls.__bases__[0])\n"
        "        return super().__subclasscheck__(sub)\n\n"
        "    def __eq__(cls, other):\n"
        "        if '_mp_value_class' in vars(cls):\n"
        "            return other is cls or other is cls.__bases__[0]\n"
        "        return super().__eq__(other)\n\n"
        "    def __hash__(cls):\n"
        "        return hash(cls.__bases__[0]) if '_mp_value_class' in vars(cls) else super().__hash__()\n\n"
        "    @property\n"
        "    def __signature__(cls):\n"
        "        if '_mp_value_class' not in vars(cls):\n"
        "            return None\n"
        "        import inspect\n\n"
        "        init = inspect.signature(cls.__init__)\n"
        "        return init.replace(parameters=list(init.parameters.values())[1:])\n")


def value_class_def(name: str, entry: Entry, base: str, factory: str, init: cst.FunctionDef,
                    metaclass: str) -> cst.ClassDef:
    """A torch layer class used as a value (``norm_layer=nn.LayerNorm`` handed on, ``dict(gelu=nn.GELU)``,
    ``partial(nn.BatchNorm2d, eps=1e-3)``, ``class LayerNorm2d(nn.LayerNorm)`` with an ``__init__`` of its own): a
    class of the file over MindSpore's class (``base``), so it is a class wherever torch's is one (a base, in
    ``issubclass``; ``metaclass``, value_metaclass_def, makes ``isinstance`` test MindSpore's class). Called, it is the factory (``factory``, torch's parameters building MindSpore's layer with each
    bound statically): the object built is MindSpore's layer itself, as a direct construction's is (``type(m) is
    nn.LayerNorm``). A class derived from it is built through ``init`` (torch's parameters, handed to MindSpore's
    ``__init__`` bound statically)."""
    lines = [
        f"class {name}({base}, metaclass={metaclass}):",
        f'    """{entry.torch} as a value: called, {factory}(...) builds MindSpore\'s layer; a class derived from it',
        f'    is built with torch\'s arguments."""',
        "",
        "    _mp_value_class = True",
        f"    _mp_torch_name = {entry.torch.rsplit('.', 1)[-1]!r}",
        "",
        "    def __new__(cls, *args, **kwargs):",
        f"        if cls is {name}:",
        f"            return {factory}(*args, **kwargs)",
        "        return super().__new__(cls, *args, **kwargs)",
    ]
    cls = parse_statement("\n".join(lines) + "\n")
    body = list(cls.body.body)
    return cls.with_changes(body=cls.body.with_changes(
        body=[*body, init.with_changes(leading_lines=[cst.EmptyLine(indent=False)])]))


def class_init(entry: Entry, parameters: str, built: cst.Call, branches=(), kept=(), become: str = "",
               sizes: str | None = None) -> cst.FunctionDef:
    """``__init__`` of a value class (value_class_def): torch's parameters handed to MindSpore's ``__init__`` bound
    statically; ``sizes`` (sizes_statement) first; ``branches`` as factory_def's (a value that chooses another Cell:
    the instance becomes the subclass over it, ``become`` = ``mp_nn.become``, before that Cell's ``__init__``);
    ``kept``: torch's settings the Cell does not keep (object_surface.toml's ``kept``), recorded under torch's name."""
    lines = [f"def __init__(self, {parameters}):", f'    """{entry.torch}\'s parameters."""']
    if sizes:
        lines.append(f"    {sizes}")
    for condition, branch in branches:
        lines.append(f"    if {condition}:")
        if isinstance(branch, str):
            lines.append(f"        {branch}")
            continue
        target = code_of(branch.func)
        call = branch.with_changes(func=cst.parse_expression(f"{target}.__init__"),
                                   args=[cst.Arg(cst.Name("self")), *branch.args])
        lines += [f"        {become}(self, {target})", f"        {code_of(call)}"]
        lines += [f"        self.{setting} = {setting}" for setting in kept]
        lines.append("        return")
    lines.append(f"    {code_of(built.with_changes(func=cst.parse_expression('super().__init__')))}")
    lines += [f"    self.{setting} = {setting}" for setting in kept]
    return parse_statement("\n".join(lines) + "\n")


def with_init(cls: cst.ClassDef, init: cst.FunctionDef) -> cst.ClassDef:
    """``cls`` with ``init`` first in its body, after its docstring; a body of only ``pass`` (or ``...``) replaced."""
    body = list(cls.body.body) if isinstance(cls.body, cst.IndentedBlock) else []
    start = 1 if body and _docstring(body[0]) else 0
    rest = [s for s in body[start:] if not _placeholder(s)]
    if rest:
        rest[0] = rest[0].with_changes(leading_lines=[cst.EmptyLine(indent=False), *_comments(rest[0])])
    block = cst.IndentedBlock(body=[*body[:start], init, *rest])
    return cls.with_changes(body=block)


def _docstring(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr) \
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def _placeholder(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and (
        isinstance(stmt.body[0], cst.Pass)
        or isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.Ellipsis))


def insert_definitions(module: cst.Module, definitions: dict[str, cst.FunctionDef]) -> cst.Module:
    """Each definition placed just before the first top-level statement that names it (after the imports, and before
    any use, module-level ones included)."""
    body = list(module.body)
    for name, definition in definitions.items():
        index = next((i for i, stmt in enumerate(body) if _names(stmt, name)), len(body))
        spaced = definition.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
        body.insert(index, spaced)
        if index + 1 < len(body) and hasattr(body[index + 1], "leading_lines"):
            body[index + 1] = body[index + 1].with_changes(
                leading_lines=[cst.EmptyLine(), cst.EmptyLine(), *_comments(body[index + 1])])
    return module.with_changes(body=body)


def _comments(stmt) -> list:
    return [line for line in getattr(stmt, "leading_lines", ()) if line.comment is not None]


def _names(stmt: cst.CSTNode, name: str) -> bool:
    found = False

    class _Find(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> bool:
            nonlocal found
            found = found or node.value == name
            return False

    read(stmt, _Find())
    return found
