"""The host CPU as /proc/cpuinfo describes it: LLVM generates code for its features, the
bench names it, and the disk cache keys entries by it."""

from __future__ import annotations

import ctypes
import functools
import pathlib
import platform


@functools.cache
def cpu_fields() -> dict[str, str]:
    """The first processor's fields (empty where there is no /proc/cpuinfo)."""
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return {}
    fields = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        name, _, value = line.partition(":")
        fields[name.strip()] = value.strip()
    return fields


def cpu_model() -> str:
    """The model name, else what Python knows of the processor."""
    return cpu_fields().get("model name") or platform.processor() or platform.machine()


def cpu_flags() -> frozenset[str]:
    """The instruction-set flags (empty where /proc/cpuinfo has none)."""
    return frozenset(cpu_fields().get("flags", "").split())


def vector_registers() -> int:
    """Vector registers LLVM may allocate on this CPU: 32 with AVX-512, else 16 (AVX2's ymm)."""
    return 32 if "avx512f" in cpu_flags() else 16


def streaming_stores_pay() -> bool:
    """Whether large write-only outputs are written faster with non-temporal stores here: on
    AMD's Zen 4 they were (layer_norm 1.18 -> 0.78 ms), on an Intel Sapphire Rapids they
    were slower (add 20 -> 27 ms, layer_norm 0.71 -> 0.83; docs/performance.md)."""
    return cpu_fields().get("vendor_id") == "AuthenticAMD"


def l2_bytes() -> int:
    """The first core's L2 cache (0 where sysfs does not say)."""
    for index in pathlib.Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            if (index / "level").read_text().strip() == "2":
                return _size_bytes((index / "size").read_text().strip())
        except (OSError, ValueError):
            return 0
    return 0


def _size_bytes(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20}
    return int(text[:-1]) * units[text[-1]] if text[-1:] in units else int(text)


LARGE_L2 = 2 << 20
# A quarter of that L2. At 256 KB, K = 1088 in 64x64 blocks (272 KB of B strip) took chunks
# of 9 and 8 blocks, the second copied per program: 7.6 ms against 6.9-7.1 whole (1024 x
# 1088 x 1024 f32, 2 threads, Sapphire Rapids); K = 1536 and 2048 level, 128-column blocks
# of K = 1024 (512 KB) within 1-4%.
LARGE_PACK = 512 << 10


def large_pack_bytes() -> int | None:
    """The largest f32 matmul B block copied whole, where the L2 keeps one of LARGE_PACK
    beside the rest (None: the default, `packed_operands.PACK_BYTES`). Measured faster on a
    2 MB L2 (Sapphire Rapids); smaller L2s keep the default they were measured with."""
    return LARGE_PACK if l2_bytes() >= LARGE_L2 else None


ARCH_REQ_XCOMP_PERM = 0x1023
XFEATURE_XTILEDATA = 18
SYS_ARCH_PRCTL = 158  # x86-64


@functools.cache
def amx_usable() -> bool:
    """Whether kernels may use AMX bf16 tiles here: the CPU lists them (and AVX512_BF16,
    whose dot products take the bf16 matmuls the tiles do not; every AMX CPU has it) and
    Linux granted this process the tile state (asked once; torch's oneDNN asks the same).
    Without the grant the first tile instruction kills the process with SIGILL."""
    flags = cpu_flags()
    if not {"amx_bf16", "amx_tile", "avx512_bf16"} <= flags or platform.machine() != "x86_64":
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(SYS_ARCH_PRCTL, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0
