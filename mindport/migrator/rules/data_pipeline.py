"""The converter rule DataPipelineTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/data_pipeline.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.mappings.transforms import Unsupported
from mindport.migrator.project import LOADER_ONLY_FIELDS, called_params
from mindport.migrator.rules.base import Example, Rule
from mindport.migrator.scopes import dotted_name
from mindport.migrator.syntax import code_of, is_docstring, target_names
from mindport.migrator.table import CallBindError, RunTimeArguments, bind_arguments, map_arguments
from mindport.migrator.walk import parse_expression, parse_statement, walk

# DataLoader arguments whose effect is decided at run time: mindport.runtime.data.DataLoader, torch's semantics
_RUN_TIME = {"sampler", "batch_sampler", "collate_fn", "worker_init_fn", "timeout"}
_DATASET_BASES = {"torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset", "torch.utils.data.IterableDataset"}


class DataPipelineTransform(Rule):
    """``DataLoader``/``Dataset`` base classes -> ``mindspore.dataset`` (GeneratorDataset + batch); the columns of a
    ``TensorDataset`` (its mapping entry: ``mindport.runtime.data.TensorDataset``) name the loader's.

    GeneratorDataset needs the column names when the code is converted, and yields a list of columns. Where what the
    dataset returns is not known then (a dict, a single value, a class of another file, an ``IterableDataset``), or
    the loader has a ``sampler``, ``batch_sampler``, ``collate_fn``, ``worker_init_fn``, ``timeout``, ``shuffle``
    (under ``mindspore.set_seed`` GeneratorDataset draws the same order every epoch; torch draws a new one) or
    ``batch_size=None``, or the file reads ``loader.dataset`` (or ``.sampler``, ``.drop_last`` ..., fields a
    pipeline has not) under any name the loader may reach -- its own, a parameter of a function of the file it is
    passed to (``train(train_loader)`` reading ``dataloader.dataset``), the parameters of the ``__init__`` of a class
    of the file it is given to and the attribute it is stored in (``Trainer(model, val_loader)``, ``self.val_loader =
    val_loader``, ``len(self.val_loader.dataset)``), the names a call of a function returning it is assigned to, the
    dict/list/tuple it is an element of (``loaders = {'test': DataLoader(...)}``), what a function returns whose
    result another file of the project reads such a field of (``convert_path``: ``get_loaders()`` in data.py,
    ``len(test_loader.dataset)`` in main.py), and a parameter of a function, method or class of another file of the
    project that reads such a field of it, handed the loader or its container positionally or by keyword
    (``convert_path``: ``utils.eval(loaders['test'], model)``, ``len(loader.dataset)`` in utils.py) -- the
    DataLoader is ``mindport.runtime.data.DataLoader``: torch's semantics (samplers drawn lazily, ``default_collate`` into MindSpore tensors, any item structure,
    ``len(loader)``), with the same arguments."""

    EXAMPLES = (
        Example(
            before="""
                import torch
                from torch.utils.data import DataLoader, TensorDataset

                x = torch.randn(64, 3)
                y = torch.randint(0, 2, (64,))
                loader = DataLoader(TensorDataset(x, y), batch_size=16, drop_last=True)
            """,
            after="""
                from mindspore import ops
                import mindspore.dataset as ds
                from mindport.runtime import data as mp_data

                x = ops.randn(64, 3)
                y = ops.randint(0, 2, (64,))
                loader = ds.GeneratorDataset(mp_data.TensorDataset(x, y), column_names=['data', 'label'], shuffle=False).batch(16, drop_remainder=True)
            """,
            note='DataLoader becomes a GeneratorDataset, batched; TensorDataset is mindport\'s (items of tensors, as '
                 'in torch), which GeneratorDataset reads as a random-access source.',
        ),
        Example(
            before="""
                from torch.utils.data import Dataset


                class Pairs(Dataset):
                    def __init__(self, items):
                        self.items = items

                    def __len__(self):
                        return len(self.items)

                    def __getitem__(self, i):
                        return self.items[i]
            """,
            after="""


                class Pairs:
                    def __init__(self, items):
                        self.items = items

                    def __len__(self):
                        return len(self.items)

                    def __getitem__(self, i):
                        i = i.item() if hasattr(i, "item") else i
                        return self.items[i]
            """,
            note='A Dataset subclass becomes a plain source class; GeneratorDataset hands it numpy indices.',
        ),
        Example(
            before="""
                import torch
                from torch.utils.data import DataLoader, TensorDataset


                def make_data(n):
                    return TensorDataset(torch.randn(n, 3), torch.randn(n, 2), torch.zeros(n))


                loader = DataLoader(make_data(8), batch_size=4)
            """,
            after="""
                from mindspore import ops
                import mindspore.dataset as ds
                from mindport.runtime import data as mp_data


                def make_data(n):
                    return mp_data.TensorDataset(ops.randn(n, 3), ops.randn(n, 2), ops.zeros(n))


                loader = ds.GeneratorDataset(make_data(8), column_names=['column_0', 'column_1', 'column_2'], shuffle=False).batch(4)
            """,
            note="A dataset made by a function of the file: the columns are those of what every return gives.",
        ),
        Example(
            before="""
                from torch.utils.data import DataLoader, WeightedRandomSampler


                def make_loader(dataset, weights, collate):
                    sampler = WeightedRandomSampler(weights, num_samples=int(1e10), replacement=True)
                    return DataLoader(dataset, batch_size=32, sampler=sampler, collate_fn=collate, num_workers=4)
            """,
            after="""
                from mindport.runtime import data as mp_data


                def make_loader(dataset, weights, collate):
                    sampler = mp_data.WeightedRandomSampler(weights, int(1e10), replacement=True)
                    return mp_data.DataLoader(dataset, batch_size=32, sampler=sampler, collate_fn=collate, num_workers=4)
            """,
            note="A dataset of unknown items, a sampler and a collate_fn: mindport's DataLoader, with torch's semantics; "
                 "the sampler draws its 1e10 indices as they are read.",
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.columns: dict[str, int] = {}  # dataset variable or class name -> number of columns it yields
        self._dataset_read: set[str] = set()  # names whose .dataset (or another torch-only loader field) is read
        self._aliases = _LoaderAliases(cst.Module(body=[]))
        self._targets: dict[int, list[str]] = {}  # id(call) -> the names it is assigned to

    def visit_Module(self, node: cst.Module) -> None:
        class _Reads(cst.CSTVisitor):
            def visit_Attribute(inner, n) -> None:
                if n.attr.value in LOADER_ONLY_FIELDS and (name := dotted_name(n.value)):
                    self._dataset_read.add(name)

        walk(node, _Reads())
        self._aliases = _LoaderAliases(node)
        # another file of the project reads such a field of what one of this file's functions returns
        # (project.loader_field_reads: ``train_loader, test_loader = get_mnist_loaders(128)``, then
        # ``len(test_loader.dataset)`` in main.py)
        self._dataset_read |= {_returned_by(name) for name in self.ctx.options.loader_reads}
        # or a function, method or class of the project reads such a field of what a parameter it is handed holds
        # (project.loader_param_reads: ``utils.eval(loaders['test'], model)``, ``len(loader.dataset)`` in utils.py)
        self._dataset_read |= _handed_to_readers(node, self.ctx.options.loader_params)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = [b for b in node.bases if (self.scope.resolve_torch(b.value) or "") in _DATASET_BASES]
        if not bases:
            return
        for base in bases:
            self.ctx.handled.add(id(base.value))
        count = _getitem_columns(node)
        if any((self.scope.resolve_torch(b.value) or "").endswith("IterableDataset") for b in bases):
            count = 0  # what an iterable yields is read at run time (mindport.runtime.data.DataLoader)
        if count:
            self.columns[node.name.value] = count

    def leave_ClassDef(self, original_node, updated_node):
        keep = [b for o, b in zip(original_node.bases, updated_node.bases)
                if (self.scope.resolve_torch(o.value) or "") not in _DATASET_BASES]
        if len(keep) == len(updated_node.bases):
            return updated_node
        self.ctx.converted_sites += 1
        updated_node = _index_as_int(updated_node)
        if keep:
            keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated_node.with_changes(bases=keep)
        return updated_node.with_changes(bases=[], lpar=cst.MaybeSentinel.DEFAULT, rpar=cst.MaybeSentinel.DEFAULT)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        """A function whose every return is a dataset of known columns (``return TensorDataset(x, y)``) yields
        those columns: ``DataLoader(make_data())`` needs no guess."""
        counts = {self._count(value) for value in _returns(node)}
        if len(counts) == 1 and 0 not in counts:
            self.columns[node.name.value] = counts.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        # a loader assigned, or held in a display assigned (``loaders = {'test': DataLoader(...)}``), or assigned
        # into a container (``loaders['test'] = DataLoader(...)``): the names it is reached by
        names = []
        for t in node.targets:
            held = _held_in(t.target)
            names += [held] if held else target_names(t.target)
        for call in _displayed_calls(node.value):
            self._targets[id(call)] = names
        count = self._count(node.value)
        if count:
            for target in node.targets:
                for name in target_names(target.target):
                    self.columns[name] = count

    def _count(self, expr) -> int:
        if isinstance(expr, cst.Call):
            qual = self.scope.resolve_torch(expr.func) or ""
            if self._public(qual) == "torch.utils.data.TensorDataset":
                return len(expr.args) if all(a.star == "" for a in expr.args) else 0
            return self.columns.get(dotted_name(expr.func) or "", 0)
        if isinstance(expr, cst.Name):
            return self.columns.get(expr.value, 0)
        return 0

    def leave_Call(self, original_node, updated_node):
        qual = self.scope.resolve_torch(original_node.func)
        # (TensorDataset is its mapping entry's: mindport.runtime.data.TensorDataset, items of MindSpore tensors)
        if self._public(qual) == "torch.utils.data.DataLoader":  # also torch.utils.data.dataloader.DataLoader
            self.ctx.handled.add(id(original_node))
            return self._loader(original_node, updated_node)
        return updated_node

    def _public(self, qual: str | None) -> str | None:
        """The public name of a torch API written under its defining module (torch.utils.data.dataloader.X)."""
        entry = self.ctx.registry.lookup(qual) if qual else None
        return entry.torch if entry is not None else qual

    def _loader(self, original_node, updated_node):
        entry = self.ctx.registry.lookup("torch.utils.data.DataLoader")
        try:
            bound = bind_arguments(entry, list(updated_node.args))
        except RunTimeArguments:
            # DataLoader(ds, batch_size=b, **kwargs) (kwargs = {'num_workers': 1, 'pin_memory': True} if cuda else {}):
            # which arguments arrive is known when the call runs; mindport.runtime.data's DataLoader takes torch's
            # parameters, so the call keeps its arguments as written
            self.ctx.converted_sites += 1
            return updated_node.with_changes(func=parse_expression(
                f"{self.ctx.alias_for('mindport.runtime.data')}.DataLoader"))
        except CallBindError as exc:
            self.flag(original_node, "MP102", f"torch.utils.data.DataLoader: {exc}", "build the dataset by hand",
                      "torch.utils.data.DataLoader")
            return updated_node
        dataset = bound["dataset"]
        count = self._count(original_node.args[0].value if original_node.args and original_node.args[0].keyword
                            is None else dataset.node)
        given = {name for name, arg in bound.items() if arg.given and arg.source != "None"}
        if count < 2 or given & _RUN_TIME or bound["batch_size"].source == "None" \
                or bound["shuffle"].given and bound["shuffle"].source not in ("False", "None") \
                or self._aliases.reach(self._targets.get(id(original_node), ()), original_node) & self._dataset_read:
            # what the dataset returns, the sampling or the collation is only known when it runs, or the loader's
            # .dataset is read: torch's DataLoader semantics in mindport.runtime.data
            self.ctx.converted_sites += 1
            return updated_node.with_changes(func=parse_expression(
                f"{self.ctx.alias_for('mindport.runtime.data')}.DataLoader"))
        try:
            map_arguments(entry, dict(bound))  # raises Unsupported for arguments with no equivalent
        except Unsupported as exc:
            self.flag(original_node, "MP102", f"torch.utils.data.DataLoader: {exc}", "build the dataset by hand",
                      "torch.utils.data.DataLoader")
            return updated_node
        names = ["data", "label"] if count == 2 else [f"column_{i}" for i in range(count)]
        ds = self.ctx.alias_for("mindspore.dataset")
        args = [dataset.source, f"column_names={names!r}"]
        shuffle = bound["shuffle"].source if bound["shuffle"].given else "False"
        args.append(f"shuffle={'False' if shuffle == 'None' else shuffle}")
        # num_workers is not passed on: the same batches in the same order either way (mindport.runtime.data's
        # DataLoader ignores it too), and MindSpore refuses more workers than the machine has cores (num_workers=4 on
        # 2 cores: "num_parallel_workers exceeds the boundary") and pickles the dataset into worker processes (a
        # Dataset class defined in a function cannot be)
        text = f"{ds}.GeneratorDataset({', '.join(args)})"
        batch = bound["batch_size"].source
        if batch != "None":
            drop = bound["drop_last"]
            text += f".batch({batch}" + (f", drop_remainder={drop.source})" if drop.given else ")")
        self.ctx.converted_sites += 1
        return parse_expression(text)


class _LoaderAliases:
    """Which names of a file may hold the same object (conservatively, by name): a call of a function of the file
    joins each argument with the parameter it binds (``train(train_loader)`` and ``def train(dataloader)``; building
    a class of the file, ``Trainer(loader)``, binds its ``__init__``'s), an assignment of a name joins its target
    (``self.loader = loader``), and an
    assignment from such a call joins its targets with what the function returns (pairwise for a tuple unpacked into
    as many names); a call returned directly stands for itself. ``reach`` gives every name joined to a loader's."""

    def __init__(self, module: cst.Module) -> None:
        self.parent: dict[str, str] = {}
        funcs: dict[str, list[cst.FunctionDef]] = {}

        inits: dict[str, list[cst.FunctionDef]] = {}  # class name -> its __init__ (Trainer(train_loader, ...))

        class _Defs(cst.CSTVisitor):
            def visit_FunctionDef(inner, node) -> None:
                funcs.setdefault(node.name.value, []).append(node)

            def visit_ClassDef(inner, node) -> None:
                for item in node.body.body if isinstance(node.body, cst.IndentedBlock) else ():
                    if isinstance(item, cst.FunctionDef) and item.name.value == "__init__":
                        inits.setdefault(node.name.value, []).append(item)

        walk(module, _Defs())
        self._returned_in: set[int] = set()  # ids of the calls a function of the file returns
        for defs in funcs.values():
            for fn in defs:
                for value in _returns(fn):
                    for element in value.elements if isinstance(value, cst.Tuple) else (value,):
                        element = getattr(element, "value", element)
                        if isinstance(element, cst.Call):
                            self._returned_in.add(id(element))
                            self.join(self._call_token(element), _returned_by(fn.name.value))
                        elif name := dotted_name(element):
                            self.join(name, _returned_by(fn.name.value))
        aliases = self

        class _Flow(cst.CSTVisitor):
            def visit_Call(inner, node) -> None:
                name = _callee(node)
                built = inits.get(name or "", []) if isinstance(node.func, cst.Name) else []
                for fn in [*funcs.get(name or "", ()), *built]:
                    params = [p.name.value for p in fn.params.params]
                    if (isinstance(node.func, cst.Attribute) or fn in built) and params[:1] in (["self"], ["cls"]):
                        params = params[1:]  # a method's, or a class's __init__ called by building the class
                    keywords = params + [p.name.value for p in fn.params.kwonly_params]
                    for i, arg in enumerate(a for a in node.args if a.keyword is None and a.star == ""):
                        if i < len(params) and (source := _held_in(arg.value)):
                            aliases.join(source, params[i])
                    for arg in node.args:
                        if arg.keyword is not None and arg.keyword.value in keywords \
                                and (source := _held_in(arg.value)):
                            aliases.join(source, arg.keyword.value)

            def visit_Assign(inner, node) -> None:
                if (source := _held_in(node.value)) is not None:
                    # self.val_loader = val_loader: the attribute holds the loader; test = loaders['test'], or
                    # loaders['test'] = test: the container may hold it
                    for target in node.targets:
                        if name := _held_in(target.target):
                            aliases.join(name, source)
                    return
                if not isinstance(node.value, cst.Call):
                    return
                for fn in funcs.get(_callee(node.value) or "", ()):
                    for value in _returns(fn):
                        for target in node.targets:
                            aliases.join_values(target.target, value)

        walk(module, _Flow())

    def _call_token(self, call) -> str:
        return f"<call {id(call)}>"

    def find(self, name: str) -> str:
        while self.parent.get(name, name) != name:
            name = self.parent[name]
        return name

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb

    def join_values(self, target, value) -> None:
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, cst.Tuple) \
                and len(target.elements) == len(value.elements):
            for t, v in zip(target.elements, value.elements):
                self.join_values(t.value, v.value)
            return
        sources = [self._name_of(v) for v in (value.elements if isinstance(value, cst.Tuple) else (value,))]
        for name in [dotted_name(target)] if dotted_name(target) else target_names(target):
            for source in filter(None, sources):
                self.join(name, source)

    def _name_of(self, value):
        value = getattr(value, "value", value) if isinstance(value, cst.Element) else value
        if isinstance(value, cst.Call):
            return self._call_token(value)
        return dotted_name(value)

    def reach(self, names, call) -> set[str]:
        """Every name joined to ``names`` (a loader's targets) or to ``call`` returned by a function."""
        starts = set(names) | ({self._call_token(call)} if id(call) in self._returned_in else set())
        roots = {self.find(n) for n in starts}
        return starts | roots | {n for n in self.parent if self.find(n) in roots}


def _returned_by(function: str) -> str:
    """The token standing for what a function of the file returns (_LoaderAliases)."""
    return f"<returned by {function}>"


def _held_in(value) -> str | None:
    """The name an argument reads: ``loader``, ``self.loader``, or the container of ``loaders[0]``."""
    while isinstance(value, cst.Subscript):
        value = value.value
    return dotted_name(value)


def _displayed_calls(value) -> list:
    """The calls an assigned value is or holds as an element of a dict/list/tuple/set display, nested or not."""
    if isinstance(value, cst.Call):
        return [value]
    if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
        return [c for e in value.elements for c in _displayed_calls(getattr(e, "value", e))]
    if isinstance(value, cst.Dict):
        return [c for e in value.elements for c in _displayed_calls(e.value)]
    return []


def _handed_to_readers(module: cst.Module, readers: tuple) -> set[str]:
    """The names (a loader's, or its container's) a file hands, positionally or by keyword, to a parameter of a
    function, method or class of the project that reads a DataLoader-only field of it (``readers``: Options.
    loader_params, ``project.loader_param_reads``): ``utils.eval(loaders['test'], model)`` gives ``loaders``."""
    by_name: dict[str, list] = {}
    for name, params, read in readers:
        by_name.setdefault(name, []).append((params, read))
    found: set[str] = set()
    if not by_name:
        return found

    class _Calls(cst.CSTVisitor):
        def visit_Call(inner, node) -> None:
            for params, read in by_name.get(_callee(node) or "", ()):
                params = called_params(params, isinstance(node.func, cst.Attribute))
                positional = [a for a in node.args if a.keyword is None and a.star == ""]
                for i, arg in enumerate(positional):
                    if i < len(params) and params[i] in read and (source := _held_in(arg.value)):
                        found.add(source)
                for arg in node.args:
                    if arg.keyword is not None and arg.keyword.value in read and (source := _held_in(arg.value)):
                        found.add(source)

    walk(module, _Calls())
    return found


def _callee(call: cst.Call) -> str | None:
    if isinstance(call.func, cst.Name):
        return call.func.value
    if isinstance(call.func, cst.Attribute):
        return call.func.attr.value
    return None


def _getitem_columns(cls: cst.ClassDef) -> int:
    for stmt in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ():
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value in ("__getitem__", "__iter__"):
            for ret in _returns(stmt):
                if isinstance(ret, cst.Tuple):
                    return len(ret.elements)
                return 1
    return 0


def _returns(fn: cst.FunctionDef) -> list:
    found = []

    class _Walk(cst.CSTVisitor):
        def visit_Return(self, node) -> None:
            if node.value is not None:
                found.append(node.value)

        def visit_Yield(self, node) -> None:
            if node.value is not None:
                found.append(node.value)

    walk(fn, _Walk())
    return found


def _index_as_int(cls: cst.ClassDef) -> cst.ClassDef:
    """A Dataset's ``__getitem__(self, i)`` gets ``i = i.item() if hasattr(i, "item") else i`` first:
    GeneratorDataset passes numpy integers, which MindSpore tensors refuse as indices (``self.x[i]``)."""
    body = list(cls.body.body) if isinstance(cls.body, cst.IndentedBlock) else []
    for n, stmt in enumerate(body):
        if not (isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__getitem__"
                and len(stmt.params.params) == 2 and isinstance(stmt.body, cst.IndentedBlock)):
            continue
        index = stmt.params.params[1].name.value
        line = parse_statement(f"{index} = {index}.item() if hasattr({index}, \"item\") else {index}\n")
        statements = list(stmt.body.body)
        if statements and code_of(statements[0]).strip() == code_of(line).strip():
            return cls  # converted before (idempotence)
        at = 1 if statements and is_docstring(statements[0]) else 0
        statements.insert(at, line)
        body[n] = stmt.with_changes(body=stmt.body.with_changes(body=statements))
        return cls.with_changes(body=cls.body.with_changes(body=body))
    return cls
