"""A miniature of Helion's test/ layout for tests/test_conformance.py: a Triton-only class
whose outputs are right, wrong, read as code (quoted, or counted), or end the process,
and a test Helion skips
outside reference mode."""

import os
import signal

import helion
import helion.language as hl
import torch
from helion._testing import DEVICE, TestCase, code_and_output, onlyBackends, skipIfNormalMode


@helion.kernel(autotune_effort="none")
def triple(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for t in hl.tile(x.size(0)):
        out[t] = x[t] * 3.0
    return out


@onlyBackends(["triton"])
class TestMini(TestCase):
    def test_right(self) -> None:
        x = torch.randn(37, device=DEVICE)
        code, out = code_and_output(triple, (x,), block_sizes=[16])
        torch.testing.assert_close(out, x * 3)
        self.assertIn("tl.load", code)  # a check of Triton's text: off

    def test_wrong(self) -> None:
        x = torch.randn(37, device=DEVICE)
        _, out = code_and_output(triple, (x,), block_sizes=[16])
        torch.testing.assert_close(out, x * 4)

    def test_code_only(self) -> None:
        x = torch.randn(37, device=DEVICE)
        code, _ = code_and_output(triple, (x,), block_sizes=[16])
        assert "tl.load" in code, code

    def test_code_count(self) -> None:
        x = torch.randn(37, device=DEVICE)
        code, out = code_and_output(triple, (x,), block_sizes=[16])
        torch.testing.assert_close(out, x * 3)
        self.assertEqual(code.count("tl.load"), 1)  # a number read off the code

    @skipIfNormalMode("a kernel Helion's compiler once rejected")
    def test_once_rejected(self) -> None:
        x = torch.randn(21, device=DEVICE)
        torch.testing.assert_close(triple(x), x * 3)

    def test_crash(self) -> None:
        triple(torch.randn(5, device=DEVICE))
        os.kill(os.getpid(), signal.SIGSEGV)
