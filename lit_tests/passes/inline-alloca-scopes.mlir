// Each memref.alloca_scope is inlined where it stands (convert-scf-to-cf needs one-block
// regions); its stack buffers move to the start of the omp.parallel region, one per
// thread rather than one per program. A stack buffer outside one is an error.
// RUN: helion-opt %s --split-input-file --verify-diagnostics --helion-inline-alloca-scopes | FileCheck %s

// CHECK-LABEL: func.func @program(
// CHECK-SAME: %[[OUT:[a-z0-9_]+]]: memref<8x4xf32>
// CHECK-NEXT: %[[C0:[a-z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[a-z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[C8:[a-z0-9_]+]] = arith.constant 8 : index
// CHECK-NEXT: omp.parallel {
// CHECK-NEXT: %[[TILE:[a-z0-9_]+]] = memref.alloca() : memref<4xf32>
// CHECK-NEXT: omp.wsloop {
// CHECK-NEXT: omp.loop_nest (%[[I:[a-z0-9_]+]]) : index = (%[[C0]]) to (%[[C8]]) step (%[[C1]]) {
// CHECK-NEXT: %[[ROW:[a-z0-9_]+]] = memref.subview %[[OUT]][%[[I]], 0] [1, 4] [1, 1]
// CHECK-NEXT: memref.copy %[[TILE]], %[[ROW]]
// CHECK-NEXT: omp.yield
func.func @program(%out: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        memref.alloca_scope {
          %tile = memref.alloca() : memref<4xf32>
          %row = memref.subview %out[%i, 0] [1, 4] [1, 1] : memref<8x4xf32> to memref<4xf32, strided<[1], offset: ?>>
          memref.copy %tile, %row : memref<4xf32> to memref<4xf32, strided<[1], offset: ?>>
        }
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

// CHECK-LABEL: func.func @no_buffers(
// CHECK-NEXT: %[[C1:[a-z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[SUM:[a-z0-9_]+]] = arith.addi %[[C1]], %[[C1]] : index
// CHECK-NEXT: return %[[SUM]] : index
func.func @no_buffers() -> index {
  %0 = memref.alloca_scope -> index {
    %c1 = arith.constant 1 : index
    %1 = arith.addi %c1, %c1 : index
    memref.alloca_scope.return %1 : index
  }
  return %0 : index
}

// -----

func.func @no_parallel_region() {
  // expected-error @below {{a stack buffer outside an OpenMP parallel region}}
  memref.alloca_scope {
    %tile = memref.alloca() : memref<4xf32>
  }
  return
}
