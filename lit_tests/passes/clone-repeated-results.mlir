// A buffer returned twice is copied into a new buffer for its second place
// (buffer-results-to-out-params crashes on it); repeated scalars are left alone.
// RUN: helion-opt %s --helion-clone-repeated-results | FileCheck %s

// CHECK-LABEL: func.func @twice(
// CHECK-SAME: %[[N:[a-z0-9_]+]]: index
// CHECK-NEXT: %[[BUF:[a-z0-9_]+]] = memref.alloc(%[[N]]) : memref<?x4xf32>
// CHECK-NEXT: %[[C0:[a-z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[ROWS:[a-z0-9_]+]] = memref.dim %[[BUF]], %[[C0]] : memref<?x4xf32>
// CHECK-NEXT: %[[COPY:[a-z0-9_]+]] = memref.alloc(%[[ROWS]]) : memref<?x4xf32>
// CHECK-NEXT: memref.copy %[[BUF]], %[[COPY]] : memref<?x4xf32> to memref<?x4xf32>
// CHECK-NEXT: return %[[BUF]], %[[COPY]], %[[N]], %[[N]] :
func.func @twice(%n: index) -> (memref<?x4xf32>, memref<?x4xf32>, index, index) {
  %buf = memref.alloc(%n) : memref<?x4xf32>
  return %buf, %buf, %n, %n : memref<?x4xf32>, memref<?x4xf32>, index, index
}
