"""docs/op-coverage.md is generated (tools/op_coverage_doc.py) and must stay current."""

from __future__ import annotations

import pytest

from helion_fx_mlir.examples import EXAMPLES
from helion_fx_mlir.tools import op_coverage_doc

COMMITTED = op_coverage_doc.DOC.read_text() if op_coverage_doc.DOC.is_file() else ""
CLAIMS = op_coverage_doc.claims(COMMITTED)
STALE = (
    "docs/op-coverage.md is out of date with the lowering rules or the sample kernels: "
    "run `make docs`"
)


def test_the_doc_is_what_its_own_proofs_render() -> None:
    """The doc is `render_proofs` of what it claims; with each example's claims checked
    below, that is `make docs`'s output, without one process binding every kernel again."""
    assert op_coverage_doc.render_proofs(CLAIMS, len(EXAMPLES)) == COMMITTED, STALE
    claimed = {name for by_example in CLAIMS.values() for name in by_example}
    assert sorted(claimed - set(EXAMPLES)) == [], STALE


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_doc_credits_the_example_with_the_targets_it_uses(name: str) -> None:
    """Run beside the example's other tests (conftest groups them), so its binds are
    Helion's cached ones."""
    proofs = op_coverage_doc.example_proofs(EXAMPLES[name])
    claimed = {t: ids[name] for t, ids in CLAIMS.items() if name in ids}
    assert sorted(claimed) == sorted(proofs), STALE
    assert {t: i for t, i in claimed.items() if i is not None} == {
        t: proofs[t] for t, i in claimed.items() if i is not None
    }, STALE


def test_every_rule_has_a_row() -> None:
    for target in op_coverage_doc.LOWERINGS:
        assert f"| `{op_coverage_doc.display_name(target)}` |" in COMMITTED


def test_every_sample_kernel_has_a_lit_golden() -> None:
    """Issue 3 asks a golden of each kernel; a new example without one fails here."""
    import pathlib
    import re

    lit = pathlib.Path(__file__).resolve().parent.parent / "lit_tests"
    text = "\n".join(
        p.read_text(errors="replace") for p in lit.rglob("*") if p.suffix in (".test", ".mlir")
    )
    emitted = set(re.findall(r"%examples/\w+\.py:(\w+)", text))
    assert sorted(set(EXAMPLES) - emitted) == []
