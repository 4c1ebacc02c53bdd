// After bufferization, a copy out of a view of a block-shaped buffer (a tile's valid lanes
// stored into the output) becomes a loop over the view's rows and, along each row, chunks
// of up to 64 lanes, each one masked read and write (the mask: what is left of the row).
// f16/bf16 copies stay (x86 cannot select their masked stores).
// RUN: helion-opt %s --helion-vectorize-copies | FileCheck %s

// CHECK-LABEL: func.func @store_tile(
// CHECK: %[[SRC:[a-z0-9_]+]] = memref.subview %{{[a-z0-9_]+}}[0, 0]
// CHECK-NEXT: %[[DST:[a-z0-9_]+]] = memref.subview %{{[a-z0-9_]+}}[%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}]
// CHECK: %[[ROWS:[a-z0-9_]+]] = memref.dim %[[SRC]], %{{[a-z0-9_]+}}
// CHECK: %[[COLS:[a-z0-9_]+]] = memref.dim %[[SRC]], %{{[a-z0-9_]+}}
// CHECK: %[[LANES:[a-z0-9_]+]] = arith.constant 32 : index
// CHECK: scf.for %[[ROW:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %[[ROWS]] step %{{[a-z0-9_]+}} {
// CHECK-NEXT: scf.for %[[COL:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %[[COLS]] step %[[LANES]] {
// CHECK-NEXT: %[[REST:[a-z0-9_]+]] = arith.subi %[[COLS]], %[[COL]] : index
// CHECK-NEXT: %[[LEFT:[a-z0-9_]+]] = arith.minsi %[[REST]], %[[LANES]] : index
// CHECK-NEXT: %[[MASK:[a-z0-9_]+]] = vector.create_mask %[[LEFT]] : vector<32xi1>
// CHECK-NEXT: %[[CHUNK:[a-z0-9_]+]] = vector.transfer_read %[[SRC]][%[[ROW]], %[[COL]]], %{{[a-z0-9_]+}}, %[[MASK]] {in_bounds = [true]}
// CHECK-SAME: vector<32xf32>
// CHECK-NEXT: vector.transfer_write %[[CHUNK]], %[[DST]][%[[ROW]], %[[COL]]], %[[MASK]] {in_bounds = [true]}
// CHECK-NOT: memref.copy
func.func @store_tile(%tile: memref<32x32xf32>, %out: memref<37x50xf32>, %i: index, %j: index, %m: index, %n: index) {
  %src = memref.subview %tile[0, 0] [%m, %n] [1, 1] : memref<32x32xf32> to memref<?x?xf32, strided<[32, 1]>>
  %dst = memref.subview %out[%i, %j] [%m, %n] [1, 1] : memref<37x50xf32> to memref<?x?xf32, strided<[50, 1], offset: ?>>
  memref.copy %src, %dst : memref<?x?xf32, strided<[32, 1]>> to memref<?x?xf32, strided<[50, 1], offset: ?>>
  return
}

// Rows wider than 64 lanes go in chunks of 64; a 3-D copy loops over its two outer dims.
// CHECK-LABEL: func.func @wide_rows(
// CHECK: arith.constant 64 : index
// CHECK: scf.for
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for
// CHECK: vector.transfer_read {{.*}} : memref<2x?x?xf32, strided<[4747, 101, 1]>>, vector<64xf32>
// CHECK-NOT: memref.copy
func.func @wide_rows(%buffer: memref<2x47x101xf32>, %out: memref<2x47x101xf32>, %m: index, %n: index) {
  %src = memref.subview %buffer[0, 0, 0] [2, %m, %n] [1, 1, 1] : memref<2x47x101xf32> to memref<2x?x?xf32, strided<[4747, 101, 1]>>
  %dst = memref.subview %out[0, 0, 0] [2, %m, %n] [1, 1, 1] : memref<2x47x101xf32> to memref<2x?x?xf32, strided<[4747, 101, 1]>>
  memref.copy %src, %dst : memref<2x?x?xf32, strided<[4747, 101, 1]>> to memref<2x?x?xf32, strided<[4747, 101, 1]>>
  return
}

// CHECK-LABEL: func.func @half(
// CHECK-NEXT: memref.copy
func.func @half(%a: memref<8xf16>, %b: memref<8xf16>) {
  memref.copy %a, %b : memref<8xf16> to memref<8xf16>
  return
}
