// The grid's scf.forall becomes an OpenMP parallel loop (each program in an alloca_scope),
// after the returned buffer became an out-parameter the caller owns.
// RUN: helion-opt %s --helion-grid-to-openmp | FileCheck %s

// CHECK-LABEL: func.func @grid(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: memref<64xf32>, %[[OUT:[a-z0-9_]+]]: memref<64xf32>) {
// CHECK: omp.parallel {
// CHECK-NEXT: omp.wsloop {
// CHECK-NEXT: omp.loop_nest (%[[I:[a-z0-9_]+]]) : index
// CHECK-NEXT: memref.alloca_scope
// CHECK-NEXT: %[[X:[a-z0-9_]+]] = memref.load %[[A]][%[[I]]] : memref<64xf32>
// CHECK-NEXT: memref.store %[[X]], %[[OUT]][%[[I]]] : memref<64xf32>
// CHECK-NOT: scf.forall
func.func @grid(%a: memref<64xf32>) -> memref<64xf32> {
  %out = memref.alloc() : memref<64xf32>
  scf.forall (%i) in (64) {
    %x = memref.load %a[%i] : memref<64xf32>
    memref.store %x, %out[%i] : memref<64xf32>
  }
  return %out : memref<64xf32>
}
