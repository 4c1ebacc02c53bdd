"""make conformance's plugin and report, on a miniature of Helion's test/ directory."""

from __future__ import annotations

import pathlib

from helion_fx_mlir.tools import conformance

SUITE = pathlib.Path(__file__).parent / "conformance_suite"


def test_both_modes_are_classified_and_compared(tmp_path: pathlib.Path, capsys) -> None:
    """Triton-only tests run as ours; a right output passes with its code check off, a wrong
    one fails, a process killed by a signal is a crash, and a test failing on the code
    itself is listed apart, a test Helion skips outside reference mode runs; the goal counts
    what reference mode passes."""
    code = conformance.main(["--helion-src", str(SUITE), "--results", str(tmp_path), "-n", "1"])
    ours = conformance.read_results(tmp_path / "mlir.jsonl")
    ref = conformance.read_results(tmp_path / "ref.jsonl")
    outcome = {nid.rsplit("::", 1)[1]: t.outcome for nid, t in ours.items()}
    assert outcome == {
        "test_right": "passed",
        "test_wrong": "failed",
        "test_code_only": "failed",
        "test_code_count": "failed",
        "test_crash": "crashed",
        "test_once_rejected": "passed",
    }
    assert ours["test/test_mini.py::TestMini::test_code_only"].code_failure
    assert ours["test/test_mini.py::TestMini::test_code_count"].code_failure
    assert ref["test/test_mini.py::TestMini::test_right"].outcome == "passed"
    wanted, missing = conformance.goal(ours, ref)
    assert sorted(w.rsplit("::", 1)[1] for w in wanted) == ["test_once_rejected", "test_right"]
    assert missing == []
    report = capsys.readouterr().out
    assert "| test/test_mini.py | 4 | 2 | 1 | 1 | 2 | 1 | 1 |" in report
    assert code == 0
