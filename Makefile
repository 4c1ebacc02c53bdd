# Every target installs what it needs into .venv first, so a fresh clone needs only `make`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint pytest lit bench fuzz fuzz-programs fuzz-dynamic fuzz-mlir conformance docs clean

setup: $(STAMP)

# uv installs (pinned, into the venv by its pip): the same packages as pip, in half the time,
# which every fresh clone's `make test` pays. It does not read pip's configuration, so it
# is given pip's find-links: where a machine keeps local wheels (its CPU build of torch).
UV := $(VENV)/bin/uv
FIND_LINKS = $(or $(PIP_FIND_LINKS),$(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null))

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet uv==0.13.9
	$(UV) pip install --quiet --python $(PY) --compile-bytecode \
		$(foreach dir,$(FIND_LINKS),--find-links $(dir)) torch==2.13.0 -e '.[test,mlir-tools]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) tools/demo.py

test: lint pytest lit

# Lint, format, the import direction of the layout (pyproject's importlinter contracts), types.
lint: $(STAMP)
	$(VENV)/bin/ruff check src tests tools lit_tests
	$(VENV)/bin/ruff format --check src tests tools lit_tests
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

pytest: $(STAMP)
	$(PY) -m pytest -q -n 2 --dist loadgroup --durations=15

lit: $(STAMP)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/lit -sv lit_tests

# The benchmark table against eager and the machine's limits; BENCH_AUTOTUNE=quick|full
# (default: none) adds the configs Helion's autotuner finds through the mlir backend.
bench: $(STAMP)
	$(VENV)/bin/helion-mlir bench $(if $(BENCH_AUTOTUNE),--autotune $(BENCH_AUTOTUNE))

# Differential fuzzing against Helion's reference mode; FUZZ_CASES (default 5000),
# FUZZ_SEED (0), FUZZ_JOBS (1) and FUZZ_THREADS (1: torch threads per case, as many as the
# cores the grids are split and grouped for) come from the environment. `make test` runs a
# bounded one.
fuzz: $(STAMP)
	$(PY) -m helion_fx_mlir.tools.fuzz.differential

# Generated programs (programs.py) on both pipelines against reference mode, failures
# reduced to runnable files; FUZZ_PROGRAMS (default 3000), FUZZ_SEED, FUZZ_JOBS, FUZZ_THREADS
# as above.
fuzz-programs: $(STAMP)
	$(PY) -m helion_fx_mlir.tools.fuzz.differential --programs

# The sample kernels of static shapes as twins of dynamic shapes (static_shapes=False),
# compiled at the example's inputs and run at the case's; FUZZ_CASES, FUZZ_SEED, FUZZ_JOBS,
# FUZZ_THREADS.
fuzz-dynamic: $(STAMP)
	$(PY) -m helion_fx_mlir.tools.fuzz.differential --dynamic

# Mutational fuzzing of helion-opt and `helion-mlir validate` with malformed MLIR;
# FUZZ_MLIR_RUNS (default 5000), FUZZ_MLIR_SEED (0) and FUZZ_MLIR_JOBS (1) come from the
# environment. `make test` runs a bounded one.
fuzz-mlir: $(STAMP)
	$(PY) -m helion_fx_mlir.tools.fuzz.mlir_inputs

# Helion's own test/ directory through the mlir backend and in reference mode, side by side.
# HELION_SRC names a Helion source checkout; CONFORMANCE_JOBS (2) workers per run.
conformance: $(STAMP)
	@test -n "$(HELION_SRC)" || (echo "make conformance needs HELION_SRC=<a Helion checkout with test/>" >&2; exit 2)
	$(PY) -m helion_fx_mlir.tools.conformance --helion-src "$(HELION_SRC)"

docs: $(STAMP)
	$(PY) -m helion_fx_mlir.tools.op_coverage_doc

clean:
	rm -rf $(VENV) lit_tests/Output
