"""The names a statement binds in its scope, and a function in its own (mindport.migrator.syntax): one answer shared
by the alias-update rule and the gradient-helper pass. Expected sets are Python's own scoping rules, checked against
the compiler's symbol table where it can say (``symtable``)."""
import symtable
import textwrap

import libcst as cst

from mindport.migrator.syntax import bindings_in_scope, function_bindings

SOURCE = textwrap.dedent('''
    def f(a, b=1, *args, c, d=2, **kw):
        x = 1
        y, (z, *rest) = g()
        w: int = 3
        v: int
        u += 1
        for i, j in pairs:
            with open(p) as fh, ctx() as (k, l):
                pass
        try:
            pass
        except ValueError as err:
            pass
        import os.path
        from m import n as alias
        if (m := 3):
            pass
        obj.attr = 1
        seq[0] = 2
        def inner(q):
            hidden = 1
            nonlocal x2
            x2 = 5
        class C:
            inside = 1
        lam = lambda r: (s := r)
        global g1
        return [t for t in range(3)]
''')


def _function() -> cst.FunctionDef:
    return cst.parse_module(SOURCE).body[0]


def _python_locals() -> set[str]:
    """The names CPython's compiler makes local (or declares global/nonlocal) in ``f``."""
    # x2 is nonlocal in inner: Python needs it bound in f to compile; declare it for the table
    table = symtable.symtable(SOURCE.replace("    x = 1\n", "    x = 1\n    x2 = 0\n", 1), "<f>", "exec")
    f = table.get_children()[0]
    return {s.get_name() for s in f.get_symbols() if s.is_local() or s.is_global() and s.is_declared_global()}


def test_a_function_binds_its_parameters_and_every_target_of_its_own_scope():
    found = function_bindings(_function())
    expected = _python_locals() | {"t"}  # comprehension targets count (conservative)
    assert found == expected, (found ^ expected)
    assert not {"hidden", "q", "inside", "r"} & found  # nested scopes' own names stay there


def test_a_statement_binds_in_its_scope_a_nested_definitions_name_and_its_nonlocal_names():
    body = _function().body.body
    by_text = {cst.Module([]).code_for_node(s).splitlines()[0].strip(): s for s in body}
    assert bindings_in_scope(by_text["def inner(q):"]) == {"inner", "x2"}
    assert bindings_in_scope(by_text["class C:"]) == {"C"}
    assert bindings_in_scope(by_text["for i, j in pairs:"]) == {"i", "j", "fh", "k", "l"}
    assert bindings_in_scope(by_text["lam = lambda r: (s := r)"]) == {"lam"}
    assert bindings_in_scope(by_text["obj.attr = 1"]) == set()
    assert bindings_in_scope(by_text["import os.path"]) == {"os"}
    assert bindings_in_scope(by_text["global g1"]) == {"g1"}
