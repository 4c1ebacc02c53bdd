// A module that uses the omp dialect gets the __kmpc_* entry points its translation calls,
// defined over libgomp; a module without omp ops gets nothing.
// RUN: helion-opt %s --split-input-file --helion-define-openmp-entry-points | FileCheck %s

// CHECK-LABEL: llvm.func @parallel(
// CHECK: omp.parallel
// CHECK: llvm.func @GOMP_parallel(!llvm.ptr, !llvm.ptr, i32, i32)
// CHECK-NEXT: llvm.func @GOMP_barrier()
// CHECK-NEXT: llvm.func @omp_get_thread_num() -> i32
// CHECK-NEXT: llvm.func @omp_get_num_threads() -> i32
// CHECK: llvm.func @__kmpc_fork_call(
// CHECK: llvm.call @GOMP_parallel(
// CHECK: llvm.func @__kmpc_global_thread_num(
// CHECK: llvm.func @__kmpc_barrier(
// CHECK: llvm.call @GOMP_barrier()
// CHECK: llvm.func @__kmpc_for_static_fini(
// CHECK: llvm.func @__kmpc_for_static_init_8u(
llvm.func @parallel() {
  omp.parallel {
    omp.terminator
  }
  llvm.return
}

// -----

// CHECK-LABEL: llvm.func @serial(
// CHECK-NOT: llvm.func
llvm.func @serial() {
  llvm.return
}
