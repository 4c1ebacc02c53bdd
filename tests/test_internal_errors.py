"""No internal error reaches the user: generating MLIR for every sample kernel under several
configs either works or raises our own error type, never a Python error from our code."""

from __future__ import annotations

import random

import helion
import pytest

from helion_fx_mlir import generate_mlir
from helion_fx_mlir.errors import HelionMLIRError, InternalError
from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.tools.fuzz.differential import draw_config

# Exceptions that only a bug of ours raises; a LoweringError wrapping one would hide the bug
# (the visitor raises them as InternalError).
INTERNAL = (
    KeyError,
    AttributeError,
    IndexError,
    AssertionError,
    TypeError,
    StopIteration,
    NameError,
)


def configs(bound: object, name: str) -> list[helion.Config | None]:
    """The default, the example's own configs and two drawn from its config spec."""
    rng = random.Random(name)
    drawn = [helion.Config(**draw_config(bound.config_spec, rng)) for _ in range(2)]
    return [None, *EXAMPLES[name].configs, *drawn]


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_generation_raises_no_internal_error(name: str) -> None:
    bound = EXAMPLES[name].bind()
    for config in configs(bound, name):
        try:
            generate_mlir(bound, config=config)
        except HelionMLIRError as err:
            assert not isinstance(err, InternalError), f"{name} {config}: {err}"
            cause = err.__cause__
            assert not isinstance(cause, INTERNAL), (
                f"{name} {config}: internal {type(cause).__name__} behind {err}"
            )
