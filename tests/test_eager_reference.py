"""The reference `helion-mlir run` and the fuzzers take from Helion's ref mode, on a CPU:
the out_dtype matmuls torch has only for CUDA, computed wide and cast once."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from helion_fx_mlir.tools.eager_reference import OutDtypeMatmuls

CALLS: dict[str, Callable[..., torch.Tensor]] = {
    "mm": lambda a, b, acc, dtype: torch.mm(a, b, out_dtype=dtype),
    "bmm": lambda a, b, acc, dtype: torch.bmm(a[None], b[None], out_dtype=dtype)[0],
    "addmm": lambda a, b, acc, dtype: torch.addmm(acc, a, b, out_dtype=dtype, beta=2, alpha=3),
    "baddbmm": lambda a, b, acc, dtype: torch.baddbmm(
        acc[None], a[None], b[None], out_dtype=dtype, beta=2, alpha=3
    )[0],
}


def _operands(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    if dtype.is_floating_point:
        return torch.randn(37, 50).to(dtype), torch.randn(50, 21).to(dtype)
    return torch.randint(-128, 128, (37, 50), dtype=dtype), torch.randint(
        -128, 128, (50, 21), dtype=dtype
    )


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize(
    ("dtype", "out"), [(torch.bfloat16, torch.float32), (torch.int8, torch.int32)]
)
def test_out_dtype_matmuls_run_wide_and_cast_to_the_out_dtype(
    name: str, dtype: torch.dtype, out: torch.dtype
) -> None:
    a, b = _operands(dtype)
    acc = torch.ones(37, 21, dtype=out)
    with pytest.raises(NotImplementedError):
        CALLS[name](a, b, acc, out)  # what ref mode met on a CPU
    with OutDtypeMatmuls():
        got = CALLS[name](a, b, acc, out)
    product = a.to(torch.float64) @ b.to(torch.float64)
    want = product if name in ("mm", "bmm") else 2 * acc.to(torch.float64) + 3 * product
    assert got.dtype == out
    torch.testing.assert_close(got.to(torch.float64), want, rtol=1e-5, atol=1e-4)
