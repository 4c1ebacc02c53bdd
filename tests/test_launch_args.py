"""A launch's packed arguments (runtime/launch_args.py) and the call's argument handling:
what the JIT'd entry reads, and kernels called every way Python allows."""

from __future__ import annotations

import ctypes
import struct
import threading

import helion
import helion.language as hl
import pytest
import torch

from helion_fx_mlir import compile_kernel
from helion_fx_mlir.runtime.launch_args import ArgBlock


def _word(address: int, code: str = "Q") -> int | float:
    return struct.unpack(f"<{code}", ctypes.string_at(address, struct.calcsize(code)))[0]


def test_each_pointer_leads_to_its_argument() -> None:
    """The entry's `void**`: a memref's pointer leads to its descriptor's address, whose
    fields are the tensor's storage, offset 0, sizes and strides; a scalar's to its value
    (an f32, the roofline kernels', in a slot of its own)."""
    matrix, scalar_tensor = torch.arange(12.0).reshape(3, 4), torch.tensor(5.0)
    block = ArgBlock.of([2, torch.float64, 0, torch.int64, torch.float32, torch.int64])
    buffer = block.pack([matrix, 0.25, scalar_tensor, -7, 1.5, 9])
    pointers = [_word(ctypes.addressof(buffer) + 8 * i) for i in range(6)]
    descriptor = _word(pointers[0])
    fields = [_word(descriptor + 8 * i, "q") for i in range(7)]
    assert fields == [matrix.data_ptr(), matrix.data_ptr(), 0, 3, 4, 4, 1]
    assert _word(pointers[1], "d") == 0.25
    empty = _word(pointers[2])
    assert [_word(empty + 8 * i, "q") for i in range(3)] == [scalar_tensor.data_ptr()] * 2 + [0]
    assert _word(pointers[3], "q") == -7
    assert _word(pointers[4], "f") == 1.5 and pointers[5] - pointers[4] == 8
    assert _word(pointers[5], "q") == 9


def _data_pointer(address: int) -> int:
    """The first memref's data pointer, in the buffer at `address`."""
    return _word(_word(_word(address)))


def test_launches_from_several_threads_share_no_buffer() -> None:
    """Two threads launching at once (each entry waits for the other's) each find their
    own tensor in their buffer."""
    block = ArgBlock.of([1])
    both_in = threading.Barrier(2)
    seen: dict[str, tuple[int, int]] = {}

    def launch(tensor: torch.Tensor, name: str) -> None:
        def entry(address: int) -> None:
            both_in.wait(timeout=10)
            seen[name] = (address, _data_pointer(address))

        block.launch(entry, [tensor])

    tensors = {"a": torch.ones(3), "b": torch.ones(5)}
    threads = [threading.Thread(target=launch, args=(t, n)) for n, t in tensors.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen["a"][0] != seen["b"][0]
    assert {n: pointer for n, (_, pointer) in seen.items()} == {
        n: t.data_ptr() for n, t in tensors.items()
    }


def test_a_launch_within_a_launch_packs_a_buffer_of_its_own() -> None:
    """A launch made while another of the thread's is under way (a signal handler's) leaves
    the first launch's arguments as they were, and the thread's buffer serves the next."""
    block = ArgBlock.of([1, torch.int64])
    outer, inner = torch.ones(3), torch.ones(4)
    addresses: list[int] = []

    def inner_entry(address: int) -> None:
        addresses.append(address)
        assert _data_pointer(address) == inner.data_ptr()

    def outer_entry(address: int) -> None:
        addresses.append(address)
        block.launch(inner_entry, [inner, 2])
        assert _data_pointer(address) == outer.data_ptr()
        assert _word(_word(address + 8), "q") == 1

    block.launch(outer_entry, [outer, 1])
    block.launch(inner_entry, [inner, 2])
    assert addresses[0] != addresses[1] and addresses[2] == addresses[0]


@helion.kernel(static_shapes=True)
def shifted_scale(x: torch.Tensor, scale: float = 2.0, shift: float = 0.5) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile] = x[tile] * scale + shift
    return out


@pytest.mark.parametrize(
    ("args", "kwargs", "scale", "shift"),
    [
        ((), {}, 2.0, 0.5),
        ((3.0,), {}, 3.0, 0.5),
        ((3.0, -1.0), {}, 3.0, -1.0),
        ((), {"shift": 4.0}, 2.0, 4.0),
        ((1.5,), {"shift": 4.0}, 1.5, 4.0),
    ],
)
def test_defaults_and_keywords_reach_the_kernel(
    args: tuple[float, ...], kwargs: dict[str, float], scale: float, shift: float
) -> None:
    """Positional calls skip Helion's binding to the signature (defaults appended here);
    any other call binds; both give the kernel the values Python would. 37 elements in
    blocks of 16."""
    x = torch.randn(37)
    kernel = compile_kernel(shifted_scale.bind((x,)), config=helion.Config(block_sizes=[16]))
    torch.testing.assert_close(kernel(x, *args, **kwargs), x * scale + shift)


@pytest.mark.parametrize("args", [(), (1.0, 2.0, 3.0)])
def test_a_call_with_too_few_or_too_many_arguments_raises_pythons_error(
    args: tuple[float, ...],
) -> None:
    x = torch.randn(37)
    kernel = compile_kernel(shifted_scale.bind((x,)), config=helion.Config(block_sizes=[16]))
    with pytest.raises(TypeError, match="argument"):
        kernel(*([x] if args else []), *args)
