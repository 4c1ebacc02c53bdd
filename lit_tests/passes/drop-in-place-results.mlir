// Results that are argument buffers (outputs bufferized in place) are dropped from each
// func and recorded per result (the argument, or -1) in helion.in_place_results, with the
// arguments each func never uses in helion.unused_args; callers use the argument instead.
// RUN: helion-opt %s --helion-drop-in-place-results | FileCheck %s

// CHECK: module attributes {helion.in_place_results = {kernel = array<i64: 1, -1>, main = array<i64: 1>}, helion.unused_args = {kernel = array<i64: 2>, main = array<i64>}}

// CHECK-LABEL: func.func @kernel(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<4xf32>, %[[OUT:[a-z0-9_]+]]: memref<4xf32>, %{{[a-z0-9_]+}}: memref<4xf32>) -> memref<4xf32>
// CHECK-NEXT: %[[NEW:[a-z0-9_]+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[X]], %[[NEW]]
// CHECK-NEXT: memref.copy %[[X]], %[[OUT]]
// CHECK-NEXT: return %[[NEW]] : memref<4xf32>
func.func @kernel(%x: memref<4xf32>, %out: memref<4xf32>, %unused: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  %new = memref.alloc() : memref<4xf32>
  memref.copy %x, %new : memref<4xf32> to memref<4xf32>
  memref.copy %x, %out : memref<4xf32> to memref<4xf32>
  return %out, %new : memref<4xf32>, memref<4xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: memref<4xf32>, %[[B:[a-z0-9_]+]]: memref<4xf32>) {
// CHECK-NEXT: %[[NEW:[a-z0-9_]+]] = call @kernel(%[[A]], %[[B]], %[[A]]) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> memref<4xf32>
// CHECK-NEXT: memref.copy %[[NEW]], %[[B]]
// CHECK-NEXT: return
func.func @main(%a: memref<4xf32>, %b: memref<4xf32>) -> memref<4xf32> {
  %0:2 = func.call @kernel(%a, %b, %a) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> (memref<4xf32>, memref<4xf32>)
  memref.copy %0#1, %0#0 : memref<4xf32> to memref<4xf32>
  return %0#0 : memref<4xf32>
}
