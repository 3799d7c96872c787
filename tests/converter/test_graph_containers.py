"""Lists and dicts in a model's methods that GRAPH_MODE ran otherwise than Python, silently (graph16's probe, graph19's
/tmp/g19/probe): ``dict(d)`` of a dict holding tensors is copied right (``mp_graph_safe.dict_copy``); a list or dict
changed through a second name, and ``self.xs.sort()``, are flagged MP107 (the graph really differs there: checked);
copies (``list(l)``, ``l[:]``) are not flagged and match (``l.copy()`` and ``copy.copy(l)`` then changed fail to
compile in a graph: loud, left as they are). Expected values are
torch's, in PyNative and in GRAPH_MODE."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from mindport import convert_source
from port_check import assert_port_matches_in_mode

DICT_COPY = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)

        def forward(self, x):
            outs = {"b": self.fc(x), "a": x[:, :2] + 1, "c": x[:, 1:] * 3}
            kept = dict(outs)
            kept["a"] = kept["a"] * 5
            sizes = dict({"n": 2})
            return torch.cat([kept[k] for k in kept], 1), outs["a"], torch.stack(list(dict(outs).values())) * sizes["n"]
""")

COPIES = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Copies(nn.Module):
        def forward(self, x):
            feats = [x]
            a = list(feats)
            a.append(x * 2)
            b = feats[:]
            b.append(x * 3)
            return torch.cat(feats, 1), torch.cat(a, 1), torch.cat(b, 1)
""")

ALIASES = {
    "append": "feats = [x]\n        more = feats\n        more.append(x * 2)\n        return torch.cat(feats, 1)",
    "setitem": "feats = [x, x]\n        more = feats\n        more[0] = x * 5\n        return torch.cat(feats, 1)",
    "iadd": "feats = [x]\n        more = feats\n        more += [x * 2]\n        return torch.cat(feats, 1)",
    "extend": "feats = [x]\n        more = feats\n        more.extend([x * 2])\n        return torch.cat(feats, 1)",
    "source": "feats = [x]\n        more = feats\n        feats.append(x * 2)\n        return torch.cat(more, 1)",
    "chain": "feats = [x]\n        more = feats\n        last = more\n        last.append(x * 2)\n"
             "        return torch.cat(feats, 1)",
    "element": "rows = [[x]]\n        inner = rows[0]\n        inner.append(x * 2)\n        return torch.cat(rows[0], 1)",
    "dict_update": "d = {'a': x}\n        e = d\n        e.update({'a': x * 7})\n        return d['a']",
    "dict_setitem": "d = {'a': x}\n        e = d\n        e['a'] = x * 7\n        return d['a']",
}

SELF_SORT = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Ordered(nn.Module):
        def __init__(self):
            super().__init__()
            self.order = [3, 1, 2]

        def forward(self, x):
            self.order.sort()
            return x * self.order[0]
""")

SELF_ALIAS_SORT = SELF_SORT.replace("self.order.sort()", "ks = self.order\n        ks.sort()")


def _alias_source(body):
    return ("import torch\nimport torch.nn as nn\n\n\nclass Alias(nn.Module):\n    def forward(self, x):\n        "
            + body + "\n")


def test_dict_of_one_argument_is_copied_by_update():
    code = convert_source(DICT_COPY).code
    assert "kept = mp_graph_safe.dict_copy(outs)" in code and "mp_graph_safe.dict_copy({\"n\": 2})" in code


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_dict_copy_of_tensors_matches(tmp_path, mode):
    code = convert_source(DICT_COPY).code
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    assert_port_matches_in_mode(DICT_COPY, code, "Heads", [x], tmp_path, "dict_copy", mode)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_copies_are_not_flagged_and_match(tmp_path, mode):
    result = convert_source(COPIES)
    assert not [d for d in result.diagnostics if d.code == "MP107"]
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    assert_port_matches_in_mode(COPIES, result.code, "Copies", [x], tmp_path, "list_copies", mode)


@pytest.mark.parametrize("case", sorted(ALIASES))
def test_a_change_through_a_second_name_is_flagged_where_the_graph_differs(tmp_path, case):
    source = _alias_source(ALIASES[case])
    result = convert_source(source)
    flagged = [d for d in result.diagnostics if d.code == "MP107"]
    assert flagged and all(d.severity == "warning" for d in flagged)
    assert "# mindport: MP107" in result.code
    x = np.random.default_rng(2).standard_normal((2, 3)).astype(np.float32)
    assert_port_matches_in_mode(source, result.code, "Alias", [x], tmp_path, f"alias_{case}", "pynative")
    if case in ("setitem", "dict_setitem"):  # AliasUpdateTransform binds feats/d to the written list/dict again
        assert_port_matches_in_mode(source, result.code, "Alias", [x], tmp_path, f"alias_{case}", "graph")
        return
    with pytest.raises(AssertionError):  # what the diagnostic says: the graph gives another result
        assert_port_matches_in_mode(source, result.code, "Alias", [x], tmp_path, f"alias_{case}", "graph")


@pytest.mark.parametrize("source", [SELF_SORT, SELF_ALIAS_SORT], ids=["self", "alias"])
def test_a_sort_of_a_list_on_self_is_flagged_where_the_graph_differs(tmp_path, source):
    result = convert_source(source)
    assert [d for d in result.diagnostics if d.code == "MP107"]
    x = np.random.default_rng(3).standard_normal((2, 3)).astype(np.float32)
    assert_port_matches_in_mode(source, result.code, "Ordered", [x], tmp_path, "self_sort", "pynative")
    with pytest.raises(AssertionError):
        assert_port_matches_in_mode(source, result.code, "Ordered", [x], tmp_path, "self_sort", "graph")


KEYWORD_DICT = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Heads(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.norm = nn.LayerNorm(4)

        def forward(self, x):
            out = dict(hidden=self.fc(x), skip=x)
            out["hidden"] = out["hidden"] * 2
            return self.norm(out["hidden"] + out["skip"]), out["skip"] * len(out)
""")


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_dict_of_keywords_is_a_display_and_matches(tmp_path, mode):
    """``dict(hidden=h, skip=x)`` in a model's method: a graph builds it in the Python interpreter, and a tensor read
    back from it has no known dtype, so the LayerNorm given it failed to compile (graph23's probe s2 DictLn: "negative
    dimensions are not allowed"); the display ``{"hidden": h, "skip": x}`` is the same dict, which a graph compiles
    (s2 DictLn2)."""
    result = convert_source(KEYWORD_DICT)
    assert result.diagnostics == [], [d.format() for d in result.diagnostics]
    assert 'out = {"hidden": self.fc(x), "skip": x}' in result.code
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    assert_port_matches_in_mode(KEYWORD_DICT, result.code, "Heads", [x], tmp_path, "keyword_dict", mode)


VALUE_OBJECTS = textwrap.dedent("""\
    import dataclasses
    from collections import OrderedDict, namedtuple
    from typing import NamedTuple

    import torch
    import torch.nn as nn

    Pair = namedtuple("Pair", ["h", "a"])


    class Output(OrderedDict):
        def __getattr__(self, name):
            return self[name]


    class Typed(NamedTuple):
        h: torch.Tensor


    @dataclasses.dataclass
    class Result:
        h: torch.Tensor


    class Mask:
        def __init__(self, m):
            self.m = m


    class Scale:
        def __init__(self, s):
            self.s = s

        def __call__(self, x):
            return x * self.s


    class Inner(nn.Module):
        def forward(self, x):
            return x + 1


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.scale = Scale(0.5)
            self.inner = Inner()

        def forward(self, x):
            h = self.fc(x)
            outs = [Output(h=h).h, Pair(h, x).a, Typed(h).h, Result(h=h).h, Mask(x > 0).m]
            return outs, Scale(2.0)(h), self.scale(h), Inner()(h)
""")


def test_an_object_of_a_value_class_built_in_forward_is_flagged():
    """An object of a project class that is not a module, built in a model's method from a tensor (perceiver's
    ``ModuleOutput(OrderedDict)``, a dataclass, a namedtuple or NamedTuple, fast-transformers' mask objects): GRAPH_MODE
    builds it in the Python interpreter, and a tensor read back from it has no known dtype or rank, so a LayerNorm given
    it fails to compile (graph23's probes s1/s2, MindSpore 2.10: every one of these shapes; ``@ms.jit_class`` refuses
    a tensor argument). No rewrite keeps the attribute reads of every caller right, so each construction is MP107.
    One built of literals only (``Scale(2.0)``: a graph compiles it, s1 LocalFn), one built in ``__init__``, and a
    module class are not flagged; nor is the plain ``@dataclass`` ``Result``, which RecordDictTransform writes as a
    dict display read by key (graph29: tests/converter/test_record_dicts.py)."""
    result = convert_source(VALUE_OBJECTS)
    flagged = sorted(d.message.split("'")[1] for d in result.diagnostics if d.code == "MP107")
    assert flagged == ["Mask", "Output", "Pair", "Typed"], [d.format() for d in result.diagnostics]
    assert '{"h": h}["h"]' in result.code
    assert all("GRAPH_MODE" in d.message for d in result.diagnostics if d.code == "MP107")


def test_a_value_class_of_another_file_is_flagged(tmp_path):
    """perceiver's ``ModuleOutput(OrderedDict)`` is defined in utils.py and built in modules.py: the project's
    classes based on dict/OrderedDict/NamedTuple are among its object classes (``project.object_classes_from_bases``),
    so the construction in the other file is flagged too."""
    from mindport.migrator.project import class_bases, object_classes_from_bases

    utils = "from collections import OrderedDict\n\n\nclass ModuleOutput(OrderedDict):\n    pass\n"
    objects = object_classes_from_bases([class_bases(utils)])
    assert "ModuleOutput" in objects
    source = textwrap.dedent("""\
        import torch.nn as nn
        from utils import ModuleOutput


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                return ModuleOutput(last_hidden_state=self.fc(x))
    """)
    result = convert_source(source, object_classes=objects)
    assert [d.code for d in result.diagnostics] == ["MP107"], [d.format() for d in result.diagnostics]
    assert "ModuleOutput" in result.diagnostics[0].message
