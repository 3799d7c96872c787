"""The converter rule NamedTupleDictTransform: its docstring is its documentation, its EXAMPLES are tests, and
docs/converter/namedtuple_dict.md shows both."""
from __future__ import annotations

import libcst as cst

from mindport.migrator.rules.base import Example, GraphMethodRule
from mindport.migrator.syntax import code_of, head_name
from mindport.migrator.walk import parse_expression


class NamedTupleDictTransform(GraphMethodRule):
    """In a model's methods, ``config._asdict()`` -> ``dict(zip(config._fields, config))``.

    A namedtuple kept on a model (lucidrains' ``EfficientAttentionConfig(True, True, True)`` in ``Attend``, read
    as ``config._asdict().items()`` to pick attention kernels) becomes MindSpore's own NamedTuple in a static graph
    (GRAPH_MODE, ``@jit``), which has the fields but not the methods: "'NamedTuple' object has no attribute
    '_asdict'" (MindSpore 2.10; iTransformer's six attention classes). ``dict(zip(t._fields, t))`` is what
    ``_asdict`` returns (a dict of the fields in order, Python 3.8 on) and compiles. Only a call without arguments on
    a name or attributes of one (read twice, so it must be the same value both times).
    """

    EXAMPLES = (
        Example(
            before="""
                from collections import namedtuple

                import torch.nn as nn

                Config = namedtuple("Config", ["enable_flash", "enable_math"])


                class Attend(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.config = Config(True, False)

                    def forward(self, x):
                        chosen = [name for name, on in self.config._asdict().items() if on]
                        return x * len(chosen)


                def options(config):
                    return config._asdict()
            """,
            after="""
                from collections import namedtuple

                from mindspore import nn

                Config = namedtuple("Config", ["enable_flash", "enable_math"])


                class Attend(nn.Cell):
                    def __init__(self):
                        super().__init__()
                        self.config = Config(True, False)

                    def construct(self, x):
                        chosen = [name for name, on in dict(zip(self.config._fields, self.config)).items() if on]
                        return x * len(chosen)


                def options(config):
                    return config._asdict()
            """,
            note="The fields paired with the values; a function outside a model keeps ``_asdict``.",
        ),
    )

    def leave_Call(self, original_node, updated_node):
        func = updated_node.func
        if not (self.compiled and isinstance(func, cst.Attribute) and func.attr.value == "_asdict"
                and not updated_node.args and head_name(func.value)):  # a name or attributes of one: the same value read twice
            return updated_node
        owner = code_of(func.value)
        self.ctx.converted_sites += 1
        return parse_expression(f"dict(zip({owner}._fields, {owner}))")
