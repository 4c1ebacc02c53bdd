"""The differential fuzzer: a bounded run against Helion's reference mode, and its machinery."""

from __future__ import annotations

import dataclasses
import json
import random
import sys
import time

import pytest
import torch

from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.tools.fuzz import differential

# About a minute on one core: a child's imports (~6 s), then ~0.5 s per case; the seed's
# plan visits 100 of the sample kernels (`make fuzz` runs every one many times).
BOUNDED_CASES = 100
OK_FLOOR = (
    0.85  # the rest are skips: Helion cannot bind those shapes, or reference mode fails (6 today)
)


def test_bounded_run_has_no_crash_mismatch_error_or_timeout() -> None:
    """The acceptance gate of `make test`: a fixed-seed run (`make fuzz` runs a long one).
    A run that mostly skips proves nothing, hence the floor of cases that ran ok."""
    outcomes = differential.fuzz(BOUNDED_CASES, differential.Options(seed=0))
    assert [o.case.index for o in outcomes] == list(range(BOUNDED_CASES))
    if differential.failing(outcomes) or any(o.status == "timeout" for o in outcomes):
        pytest.fail(differential.report(outcomes, bounds_checks=False), pytrace=False)
    ok = sum(o.status == "ok" for o in outcomes)
    assert ok >= OK_FLOOR * BOUNDED_CASES, differential.summary(outcomes)


# Cases a `make fuzz` run found (seed 0): bf16 masked stores and huge pad vectors aborted
# LLVM ("Do not know how to soft promote", "Cannot select"); vector<64x8192xf32> transfers
# took minutes to compile. CI's bounded run (seed 0): a one-lane row tile over cols' size-1
# dim read row `tile.begin` of it (past the end: zeros) instead of row 0. Seed 2631: a
# one-program phase 2 wrote `sum + bias` into the user's `bias`; seed 2629: a bf16 tile of
# 97-lane rows aborted LLVM at every opt level.
FOUND = [
    '{"example":"scan_reverse_cumsum","dtype":"bf16","shape_map":{"37":29,"100":65},"seed":100496873,"config":{"block_sizes":[32]}}',
    '{"example":"cat_columns","dtype":"bf16","shape_map":{"30":386,"37":35,"50":2049},"seed":1379459410,'
    '"config":{"block_sizes":[8],"reduction_loops":[null]}}',
    '{"example":"rms_norm","dtype":"f32","shape_map":{"100":4099},"seed":22252057,"config":{"block_sizes":[64],"reduction_loops":[null]}}',
    '{"example":"split_k_atomic","dtype":"f32","shape_map":{"37":43,"50":387,"300":514},"seed":1733917167,'
    '"config":{"block_sizes":[64,256,32]}}',
    '{"example":"scale_by_unit_dims","dtype":"f32","shape_map":{"21":51,"37":386},"seed":2066757341,'
    '"config":{"block_sizes":[1,2]}}',
    '{"example":"split_k_barrier_bias","dtype":"f32","shape_map":{"37":1,"45":23,"300":99},"seed":216165800,'
    '"config":{"block_sizes":[32,64,256,1,32],"reduction_loops":[null],"mlir_vector_width":512}}',
    '{"example":"reduce_tuple_argmax","dtype":"bf16","shape_map":{"37":34,"100":97},"seed":610163653,'
    '"config":{"block_sizes":[64],"mlir_vector_width":512}}',
    # Found as 47x203 run by code another case had compiled at rows of at most 128 (through
    # the disk cache); now each case compiles at the example's shape, runs at its own.
    '{"example":"row_moments","dtype":"f32","shape_map":{"203":300,"37":21},"seed":1911719352,'
    '"config":{"block_sizes":[4],"reduction_loops":[null],"mlir_vector_width":512}}',
    '{"example":"dynamic_row_rms","dtype":"f32","shape_map":{"100":203,"37":47},"seed":7,'
    '"config":{"block_sizes":[4],"reduction_loops":[null]}}',
    # `make fuzz-dynamic` (seed 0): the [m, 1] operand indexed by the 2-D tile read as a
    # masked tile (lanes past column 0 zero), where Helion broadcasts a size of 1.
    '{"example":"dynamic:scale_by_unit_dims","dtype":"f32","shape_map":{"21":67,"37":1000},'
    '"seed":761452693,"config":{"block_sizes":[2,2],"mlir_vector_width":256}}',
    # Seed 6 with bounds checks: the config was drawn from the example's bound kernel (with
    # a reduction loop), but the code generated for it guards sizes != 1, and the case's
    # 1x1 call bound a kernel of its own without one (InvalidConfig); the example's code
    # is now generated before the case binds.
    '{"example":"dynamic:layer_norm_bwd","dtype":"f32","shape_map":{"37":1,"100":1},'
    '"seed":1526758831,"config":null}',
    # `make fuzz` seed 9172: a one-element (0-d) vector read in a program loop had no
    # innermost lanes for the next program's prefetch to step (IndexError).
    '{"example":"layer_norm_bwd_dx_chunked","dtype":"f32","shape_map":{"37":73,"300":65},'
    '"seed":2055306484,"config":{"block_sizes":[128,1],"mlir_vector_width":256}}',
    # `make fuzz-programs` seed 9181: torch.mean(-row), the negation fused into the sum as
    # `out - x`, a combiner the linalg vectorizer has no identity for (the schedule failed).
    '{"example":"program:9181:63","dtype":"f32","shape_map":{},"seed":9181,'
    '"config":{"block_sizes":[128],"reduction_loops":[null],"mlir_vector_width":256}}',
]


def test_cases_the_fuzzer_found_pass_quickly() -> None:
    """In the worker: an LLVM abort ends it, which pytest-xdist reports as this test's
    failure (the codegen probe keeps the known aborts out of the process). They take
    seconds, not the minutes the huge transfers took to compile."""
    cases = [differential.FuzzCase.from_dict(json.loads(text)) for text in FOUND]
    start = time.monotonic()
    outcomes = [differential.run_case(case) for case in cases]
    assert time.monotonic() - start < 240
    assert [o.status for o in outcomes] == ["ok"] * len(FOUND), [
        (o.case.example, o.status, o.detail) for o in outcomes
    ]


def test_plans_are_deterministic_and_cover_every_example_each_round() -> None:
    names = tuple(EXAMPLES)
    plans = [differential.plan_case(i, 7, names) for i in range(len(names))]
    assert plans == [differential.plan_case(i, 7, names) for i in range(len(names))]
    assert sorted(p.example for p in plans) == sorted(names)


def test_dynamic_twins_are_the_static_sample_kernels_declared_dynamic() -> None:
    """`--dynamic`: each sample kernel of static shapes whose shapes the fuzzer varies, as
    its twin of dynamic shapes (the same function), named so that a repro reruns it."""
    twins = differential.dynamic_twins()
    names = [t.removeprefix(differential.DYNAMIC_PREFIX) for t in twins]
    assert "rms_norm" in names and "dynamic_row_rms" not in names and "head_columns" not in names
    twin, example = differential.example_named("dynamic:rms_norm"), EXAMPLES["rms_norm"]
    assert twin.kernel.fn is example.kernel.fn and not twin.kernel.settings.static_shapes
    assert differential.example_named("dynamic:rms_norm") is twin  # one per process
    plans = [differential.plan_case(i, 3, twins) for i in range(len(twins))]
    assert sorted(p.example for p in plans) == sorted(twins)
    case = dataclasses.replace(plans[0], config={"block_sizes": [8]})
    fields = case.repro(bounds_checks=False).split("--repro ", 1)[1].strip("'")
    assert differential.FuzzCase.from_dict(json.loads(fields)) == dataclasses.replace(case, index=0)


def test_kernels_indexed_by_constants_keep_their_shapes() -> None:
    """A one-column input to `head_columns` (which stores `hl.arange(5)`) put the index
    past the tensor: reference mode's duplicate clamped writes then left the row unstored."""
    names = tuple(EXAMPLES)
    plans = [differential.plan_case(i, 2627, names) for i in range(10 * len(names))]
    fixed = [p for p in plans if EXAMPLES[p.example].fixed_shapes]
    assert fixed and all(not p.shape_map for p in fixed)


def test_shape_maps_keep_small_dims_and_bound_the_inputs() -> None:
    rng = random.Random(0)
    args = (torch.zeros(37, 50, 2), torch.zeros(50), 0.5)
    for _ in range(200):
        shape_map = differential.plan_shape_map(rng, args)
        assert set(shape_map) <= {37, 50}
        assert shape_map.get(37, 37) * shape_map.get(50, 50) * 2 <= differential.MAX_NUMEL


def test_resized_inputs_keep_related_dims_equal_and_permutation_rows_distinct() -> None:
    case = differential.FuzzCase(0, "transpose_add", "f32", {37: 61, 50: 129}, seed=3)
    x, y = differential.make_inputs(case)
    assert x.shape == (61, 129) and y.shape == (129, 61)
    case = differential.FuzzCase(0, "row_argmax", "bf16", {37: 5, 100: 200}, seed=3)
    (rows,) = differential.make_inputs(case)
    assert rows.shape == (5, 200) and all(r.unique().numel() == 200 for r in rows)


def test_drawn_configs_are_valid_powers_of_two() -> None:
    example = EXAMPLES["softmax"]
    spec = example.bind().config_spec
    for seed in range(10):
        config = differential.draw_config(spec, random.Random(seed))
        assert len(config["block_sizes"]) == 1 and len(config["reduction_loops"]) == 1
        sizes = config["block_sizes"] + [c for c in config["reduction_loops"] if c is not None]
        assert all(s & (s - 1) == 0 for s in sizes)
        assert config["mlir_vector_width"] in (512, 256)


def test_a_case_reruns_from_its_repro_line() -> None:
    case = differential.FuzzCase(
        0, "add", "bf16", {37: 17, 50: 1}, seed=5, config={"block_sizes": [16, 1]}
    )
    repro = case.repro(bounds_checks=False)
    assert (
        differential.FuzzCase.from_dict(json.loads(repro.split("--repro ", 1)[1].strip("'")))
        == case
    )
    assert differential.run_case(case).status == "ok"


def test_a_run_on_several_threads_reruns_on_them(capsys: pytest.CaptureFixture[str]) -> None:
    """`--threads 3`: the case reruns on 3 threads, where a matmul grid of 5 x 3 tiles of
    32 (150 x 70 outputs) splits its edges (the rows' only: 2 programs before the columns'
    edge are fewer than the threads) and groups its programs as for 3 cores, not 1."""
    case = differential.FuzzCase(
        0, "matmul", "f32", {100: 150}, seed=5, config={"block_sizes": [32, 32, 16]}
    )
    repro = case.repro(bounds_checks=False, threads=3)
    assert " --threads 3 --repro " in repro
    argv = ["--threads", "3", "--repro", repro.split("--repro ", 1)[1].strip("'")]
    assert differential.main(argv) == 0
    assert torch.get_num_threads() == 3
    assert f"OK {case.describe()}" in capsys.readouterr().out


def test_compare_scales_tolerance_with_the_dtype_and_magnitude() -> None:
    want = torch.full((4,), 1000.0)
    assert differential.compare([want + 0.05], [want]) is None
    assert "output 0" in differential.compare([want + 1.0], [want])
    assert differential.compare([torch.tensor([1, 2])], [torch.tensor([1, 3])]) is not None
    assert "want f32" in differential.compare([want.double()], [want])


FAKE_WORKER = """
import json, os, sys, time
args = sys.argv[sys.argv.index("--start") + 1:]
start = int(args[0])
case = {"index": start, "example": "add", "dtype": "f32", "shape_map": {}, "seed": 0,
        "config": None}
print(json.dumps({"case": case}), flush=True)
if start == 1:
    os.abort()
if start == 2:
    time.sleep(60)
print(json.dumps({"outcome": {"status": "ok", "detail": ""}}), flush=True)
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_crash_or_hang_ends_only_its_child(monkeypatch, jobs: int) -> None:
    """Each fake child runs the first case of its batch and exits; case 1 aborts, case 2
    hangs. With two jobs, each stripe of cases has children of its own."""
    monkeypatch.setattr(differential, "WORKER_COMMAND", [sys.executable, "-c", FAKE_WORKER])
    outcomes = differential.fuzz(4, differential.Options(batch=1, timeout=2, jobs=jobs))
    assert [o.status for o in outcomes] == ["ok", "crash", "timeout", "ok"]
    assert outcomes[1].detail.startswith("signal 6 (SIGABRT)")
    assert "CRASH add dtype=f32" in differential.report(outcomes, bounds_checks=False)


def test_a_kernel_of_dynamic_shapes_is_compiled_at_the_examples_shape() -> None:
    """Code generated at the example's sizes runs at the case's: the bound kernel both
    shapes share is first bound at the example's inputs in every process, so its config
    space does not depend on which case bound it first (bound first at one column, it has
    no reduction loop, and a config drawn where 100 columns bound it first failed:
    InvalidConfig)."""
    example = differential.example_named("dynamic_centered_softmax")
    assert not example.kernel.settings.static_shapes
    for shape_map in [{37: 21, 100: 203}, {37: 29, 100: 1}]:
        case = differential.FuzzCase(0, example.name, "f32", shape_map, 116985527)
        prepared = differential.prepare(case)
        assert prepared.bound is example.kernel.bind(differential.make_inputs(case))
        assert differential.check(prepared, False).status == "ok"
        if 1 not in shape_map.values():
            assert prepared.bound is example.kernel.bind(example.args(seed=case.seed))


def test_only_refuses_kernels_reference_mode_cannot_judge() -> None:
    """`--only shift_right` would report reference mode's own reading of lanes written past
    the output (it clamps them onto the last element) as mismatches of ours."""
    with pytest.raises(SystemExit, match="reference mode cannot judge: shift_right"):
        differential.main(["--cases", "1", "--only", "add,shift_right"])
