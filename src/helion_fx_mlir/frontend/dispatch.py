"""The lowering table: FX target -> rule. Rules live in `rules/`, one module per family."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from helion_fx_mlir.frontend.rule_context import RuleContext

# A rule takes its node's RuleContext and returns the node's value.
Rule = Callable[["RuleContext"], Any]
LOWERINGS: dict[object, Rule] = {}


def lowers(*targets: object) -> Callable[[Rule], Rule]:
    """Register a function as the lowering rule of the given FX targets."""

    def register(rule: Rule) -> Rule:
        for target in targets:
            if target in LOWERINGS:
                raise ValueError(f"{target} already has a lowering rule")
            LOWERINGS[target] = rule
        return rule

    return register
