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
