"""The program generator: deterministic programs, a reducer, and a bounded run of
generated kernels against Helion's reference mode (fast and bounds-checked pipelines)."""

from __future__ import annotations

import dataclasses

import pytest

from helion_fx_mlir.tools.fuzz import differential, programs

# Programs run in one child, about a second each (both pipelines): a second child would
# import torch and Helion again while the other pytest worker has the core anyway (the
# driver's parallel stripes are tested with a fake worker in tests/test_fuzz.py).
BOUNDED_PROGRAMS = 60
# Programs Helion or its reference mode reject are skipped; below this many ok ones the
# generator has stopped writing kernels Helion takes, which is a failure of its own.
OK_FLOOR = 0.8


def test_bounded_run_of_generated_programs() -> None:
    outcomes = differential.fuzz(BOUNDED_PROGRAMS, differential.Options(seed=0, programs=True))
    if differential.failing(outcomes) or any(o.status == "timeout" for o in outcomes):
        pytest.fail(differential.report(outcomes, bounds_checks=False), pytrace=False)
    ok = sum(o.status == "ok" for o in outcomes)
    assert ok >= OK_FLOOR * BOUNDED_PROGRAMS, differential.summary(outcomes)


def test_programs_are_deterministic_and_cover_every_kind() -> None:
    texts = [programs.generate(3, i).render() for i in range(100)]
    assert texts == [programs.generate(3, i).render() for i in range(100)]
    assert {programs.generate(3, i).kind for i in range(100)} == set(programs.KINDS)


def test_a_jagged_tile_program_is_judged_by_its_masked_twin() -> None:
    """Reference mode has no `hl.jagged_tile`: the module carries an ORACLE kernel with
    the loop as a masked `hl.tile`, and the program runs right against it."""
    import random

    program = programs._jagged_tile(random.Random(0))
    module = programs.load_module(programs.write(program))
    assert "hl.jagged_tile(lengths)" in program.render() and "extra_mask=" in program.render()
    outcome = differential.check_kernel(
        getattr(module, program.name), module.ARGS(), None, module.ORACLE
    )
    assert outcome.status == "ok", outcome.detail


def test_the_reducer_keeps_only_what_the_failure_needs() -> None:
    """A fake failure that needs one statement and a dim of at least 13: everything
    else goes, and the dim shrinks to 13."""
    program = programs.generate(0, 1)
    needed = program.body[0]
    dim = next(iter(program.sizes))
    program = dataclasses.replace(program, sizes={**program.sizes, dim: 100})

    def still_fails(candidate: programs.Program) -> bool:
        return needed in candidate.body and candidate.sizes[dim] >= 13

    reduced = programs.reduce_program(program, still_fails)
    assert reduced.body == [needed]
    assert reduced.sizes[dim] == 13
