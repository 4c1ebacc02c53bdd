"""The ABI of kernel modules: C interface wrappers, and the `__kmpc_*` OpenMP entry points
our kernels call, implemented over torch's own libgomp.

MLIR translates `omp.parallel`/`omp.wsloop` into calls of LLVM's OpenMP runtime ABI
(`__kmpc_fork_call`, `__kmpc_for_static_init_8u`, ...), which libgomp does not export.
A second runtime (libiomp5) would bring a second pool of threads: after eager PyTorch work
its libgomp threads spin for milliseconds on the cores the kernel's threads need (a
softmax launched right after an eager op ran 2x slower). So each kernel module defines the
five entry points it calls, in the LLVM dialect, over libgomp's `GOMP_parallel`,
`GOMP_barrier` and `omp_get_thread_num`/`omp_get_num_threads`: kernels run on the threads
torch's own operators run on, and only one pool ever waits for work.
"""

from __future__ import annotations

from torch_mlir import ir

from helion_fx_mlir.mlir.context import mlir_context
from helion_fx_mlir.mlir.walk import first_op
from helion_fx_mlir.passes.registry import register

# The translation passes the outlined region one aggregate argument (its captures), so
# __kmpc_fork_call forwards exactly one; the loops it splits are normalized to step 1.
ENTRY_POINTS = """
module {
  llvm.func @GOMP_parallel(!llvm.ptr, !llvm.ptr, i32, i32)
  llvm.func @GOMP_barrier()
  llvm.func @omp_get_thread_num() -> i32
  llvm.func @omp_get_num_threads() -> i32

  llvm.func @__helion_omp_region(%ctx: !llvm.ptr) {
    %one = llvm.mlir.constant(1 : i32) : i32
    %zero = llvm.mlir.constant(0 : i32) : i32
    %region = llvm.load %ctx : !llvm.ptr -> !llvm.ptr
    %slot = llvm.getelementptr %ctx[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
    %captures = llvm.load %slot : !llvm.ptr -> !llvm.ptr
    %gtid = llvm.alloca %one x i32 : (i32) -> !llvm.ptr
    %btid = llvm.alloca %one x i32 : (i32) -> !llvm.ptr
    %thread = llvm.call @omp_get_thread_num() : () -> i32
    llvm.store %thread, %gtid : i32, !llvm.ptr
    llvm.store %zero, %btid : i32, !llvm.ptr
    llvm.call %region(%gtid, %btid, %captures) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
    llvm.return
  }

  llvm.func @__kmpc_fork_call(%loc: !llvm.ptr, %argc: i32, %region: !llvm.ptr, ...) {
    %one = llvm.mlir.constant(1 : i32) : i32
    %zero = llvm.mlir.constant(0 : i32) : i32
    %va = llvm.alloca %one x !llvm.array<24 x i8> : (i32) -> !llvm.ptr
    llvm.intr.vastart %va : !llvm.ptr
    %captures = llvm.va_arg %va : (!llvm.ptr) -> !llvm.ptr
    llvm.intr.vaend %va : !llvm.ptr
    %ctx = llvm.alloca %one x !llvm.array<2 x ptr> : (i32) -> !llvm.ptr
    llvm.store %region, %ctx : !llvm.ptr, !llvm.ptr
    %slot = llvm.getelementptr %ctx[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
    llvm.store %captures, %slot : !llvm.ptr, !llvm.ptr
    %body = llvm.mlir.addressof @__helion_omp_region : !llvm.ptr
    llvm.call @GOMP_parallel(%body, %ctx, %zero, %zero) : (!llvm.ptr, !llvm.ptr, i32, i32) -> ()
    llvm.return
  }

  llvm.func @__kmpc_global_thread_num(%loc: !llvm.ptr) -> i32 {
    %thread = llvm.call @omp_get_thread_num() : () -> i32
    llvm.return %thread : i32
  }

  llvm.func @__kmpc_barrier(%loc: !llvm.ptr, %gtid: i32) {
    llvm.call @GOMP_barrier() : () -> ()
    llvm.return
  }

  llvm.func @__kmpc_for_static_fini(%loc: !llvm.ptr, %gtid: i32) {
    llvm.return
  }

  // Static schedule, no chunk: thread t of n gets the t-th of n nearly equal contiguous
  // ranges of [lower, upper]; a thread with none gets lower = upper + 1 (zero trips).
  llvm.func @__kmpc_for_static_init_8u(%loc: !llvm.ptr, %gtid: i32, %schedule: i32,
                                       %plast: !llvm.ptr, %plower: !llvm.ptr, %pupper: !llvm.ptr,
                                       %pstride: !llvm.ptr, %incr: i64, %chunk: i64) {
    %one = llvm.mlir.constant(1 : i64) : i64
    %t32 = llvm.call @omp_get_thread_num() : () -> i32
    %n32 = llvm.call @omp_get_num_threads() : () -> i32
    %t = llvm.zext %t32 : i32 to i64
    %n = llvm.zext %n32 : i32 to i64
    %lower = llvm.load %plower : !llvm.ptr -> i64
    %upper = llvm.load %pupper : !llvm.ptr -> i64
    %span = llvm.sub %upper, %lower : i64
    %trips = llvm.add %span, %one : i64
    %each = llvm.udiv %trips, %n : i64
    %extra = llvm.urem %trips, %n : i64
    %before = llvm.intr.umin(%t, %extra) : (i64, i64) -> i64
    %skip = llvm.mul %t, %each : i64
    %offset = llvm.add %skip, %before : i64
    %start = llvm.add %lower, %offset : i64
    %longer = llvm.icmp "ult" %t, %extra : i64
    %bonus = llvm.zext %longer : i1 to i64
    %size = llvm.add %each, %bonus : i64
    %end = llvm.add %start, %size : i64
    %last_index = llvm.sub %end, %one : i64
    %zero = llvm.mlir.constant(0 : i64) : i64
    %empty = llvm.icmp "eq" %size, %zero : i64
    %after = llvm.add %upper, %one : i64
    %new_lower = llvm.select %empty, %after, %start : i1, i64
    %new_upper = llvm.select %empty, %upper, %last_index : i1, i64
    llvm.store %new_lower, %plower : i64, !llvm.ptr
    llvm.store %new_upper, %pupper : i64, !llvm.ptr
    llvm.store %trips, %pstride : i64, !llvm.ptr
    %ends = llvm.icmp "eq" %end, %after : i64
    %true = llvm.mlir.constant(true) : i1
    %nonempty = llvm.xor %empty, %true : i1
    %last = llvm.and %ends, %nonempty : i1
    %last32 = llvm.zext %last : i1 to i32
    llvm.store %last32, %plast : i32, !llvm.ptr
    llvm.return
  }
}
"""


@register(
    "helion-define-openmp-entry-points",
    "define the __kmpc_* entry points a module using omp calls, over libgomp",
)
def define_openmp_entry_points(module: ir.Module) -> None:
    """Add the entry points to a module in the LLVM dialect that uses the omp dialect."""
    if first_op(module, lambda op: op.name.startswith("omp.")) is None:
        return
    with mlir_context():
        entry_points = ir.Module.parse(ENTRY_POINTS)
        for op in list(entry_points.body.operations):
            module.body.append(op.detach_from_parent())


@register(
    "helion-emit-c-interface", "mark every func llvm.emit_c_interface (ExecutionEngine.invoke)"
)
def emit_c_interface(module: ir.Module) -> None:
    """Mark every func for a C interface: ExecutionEngine.invoke needs it."""
    with mlir_context():
        for op in module.body.operations:
            if op.operation.name == "func.func":
                op.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
