// After bufferization, a copy out of a view of a block-shaped buffer (a tile's valid lanes
// stored into the output) becomes one masked vector read and write, the mask the view's
// sizes. f16/bf16 copies stay (x86 cannot select their masked stores).
// RUN: helion-opt %s --helion-vectorize-copies | FileCheck %s

// CHECK-LABEL: func.func @store_tile(
// CHECK: %[[SRC:[a-z0-9_]+]] = memref.subview %{{[a-z0-9_]+}}[0, 0]
// CHECK-NEXT: %[[DST:[a-z0-9_]+]] = memref.subview %{{[a-z0-9_]+}}[%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}]
// CHECK: %[[ROWS:[a-z0-9_]+]] = memref.dim %[[SRC]], %{{[a-z0-9_]+}}
// CHECK: %[[COLS:[a-z0-9_]+]] = memref.dim %[[SRC]], %{{[a-z0-9_]+}}
// CHECK-NEXT: %[[C0:[a-z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[MASK:[a-z0-9_]+]] = vector.create_mask %[[ROWS]], %[[COLS]] : vector<32x32xi1>
// CHECK-NEXT: %[[PAD:[a-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[TILE:[a-z0-9_]+]] = vector.transfer_read %[[SRC]][%[[C0]], %[[C0]]], %[[PAD]], %[[MASK]] {in_bounds = [true, true]}
// CHECK-NEXT: vector.transfer_write %[[TILE]], %[[DST]][%[[C0]], %[[C0]]], %[[MASK]] {in_bounds = [true, true]}
// CHECK-NOT: memref.copy
func.func @store_tile(%tile: memref<32x32xf32>, %out: memref<37x50xf32>, %i: index, %j: index, %m: index, %n: index) {
  %src = memref.subview %tile[0, 0] [%m, %n] [1, 1] : memref<32x32xf32> to memref<?x?xf32, strided<[32, 1]>>
  %dst = memref.subview %out[%i, %j] [%m, %n] [1, 1] : memref<37x50xf32> to memref<?x?xf32, strided<[50, 1], offset: ?>>
  memref.copy %src, %dst : memref<?x?xf32, strided<[32, 1]>> to memref<?x?xf32, strided<[50, 1], offset: ?>>
  return
}

// CHECK-LABEL: func.func @half(
// CHECK-NEXT: memref.copy
func.func @half(%a: memref<8xf16>, %b: memref<8xf16>) {
  memref.copy %a, %b : memref<8xf16> to memref<8xf16>
  return
}
