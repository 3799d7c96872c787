"""The rule registry: one module per rule family; importing them registers every rule class by code."""
from __future__ import annotations

from mindport.validators.lint.rules.base import FAMILIES, REGISTRY, Rule
from mindport.validators.lint.rules import (  # noqa: F401  (imported for registration)
    syntax,
    pitfalls_data,
    pitfalls,
    defaults,
    arguments,
    torch_leftovers,
    static_graph,
    graph_calls,
    graph_python,
    semantics,
)


def all_rules() -> list[type[Rule]]:
    """Every rule class, ordered by code."""
    return [REGISTRY[c] for c in sorted(REGISTRY)]


__all__ = ["FAMILIES", "REGISTRY", "Rule", "all_rules"]
