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

// A padded load (a vectorized tensor.pad, bufferized): the block read whole with a mask
// of the valid sizes and written whole into its buffer becomes a loop over the block's
// rows, each in chunks of 64 lanes, read masked and written whole, the padding value in
// the lanes not read; a chunk with no lanes to read (a row past the valid ones) is the
// padding value without a load (a masked load past the source cost microcode assists).
// CHECK-LABEL: func.func @padded_load(
// CHECK-SAME: %[[SRC:[a-z0-9_]+]]: memref<?x?xf32, strided<[130, 1], offset: ?>>, %[[BUF:[a-z0-9_]+]]: memref<128x128xf32>, %[[M:[a-z0-9_]+]]: index, %[[N:[a-z0-9_]+]]: index
// CHECK-NOT: vector<128x128x
// CHECK: scf.for %[[ROW:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} {
// CHECK-NEXT: scf.for %[[COL:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} {
// CHECK: arith.cmpi slt, %[[ROW]], %[[M]] : index
// CHECK: %[[LEFT:[a-z0-9_]+]] = arith.select
// CHECK: %[[MASK:[a-z0-9_]+]] = vector.create_mask %[[LEFT]] : vector<64xi1>
// CHECK: %[[NONE:[a-z0-9_]+]] = arith.cmpi eq, %[[LEFT]], %{{[a-z0-9_]+}} : index
// CHECK-NEXT: %[[CHUNK:[a-z0-9_]+]] = scf.if %[[NONE]] -> (vector<64xf32>) {
// CHECK-NEXT: vector.broadcast
// CHECK: } else {
// CHECK-NEXT: vector.transfer_read %[[SRC]][%[[ROW]], %[[COL]]], %{{[a-z0-9_]+}}, %[[MASK]] {in_bounds = [true]}
// CHECK: vector.transfer_write %[[CHUNK]], %[[BUF]][%[[ROW]], %[[COL]]] {in_bounds = [true]} : vector<64xf32>, memref<128x128xf32>
func.func @padded_load(%src: memref<?x?xf32, strided<[130, 1], offset: ?>>, %buffer: memref<128x128xf32>, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.000000e+00 : f32
  %mask = vector.create_mask %m, %n : vector<128x128xi1>
  %block = vector.transfer_read %src[%c0, %c0], %pad, %mask {in_bounds = [true, true]} : memref<?x?xf32, strided<[130, 1], offset: ?>>, vector<128x128xf32>
  vector.transfer_write %block, %buffer[%c0, %c0] {in_bounds = [true, true]} : vector<128x128xf32>, memref<128x128xf32>
  return
}

// One padded row longer than a chunk (a 4100-wide row's last 4096-wide chunk, 4 lanes
// valid) in chunks of 64 too: as one vector<4096xf32> LLVM inserted its lanes one at a
// time into a spilled vector, 2 ms a row.
// CHECK-LABEL: func.func @padded_row(
// CHECK-SAME: %[[SRC:[a-z0-9_]+]]: memref<?xf32, strided<[?], offset: ?>>, %[[BUF:[a-z0-9_]+]]: memref<4096xf32>
// CHECK-NOT: vector<4096x
// CHECK: scf.for %[[COL:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} {
// CHECK: %[[MASK:[a-z0-9_]+]] = vector.create_mask %{{[a-z0-9_]+}} : vector<64xi1>
// CHECK: %[[CHUNK:[a-z0-9_]+]] = scf.if
// CHECK: vector.transfer_read %[[SRC]][%[[COL]]], %{{[a-z0-9_]+}}, %[[MASK]] {in_bounds = [true]}
// CHECK: vector.transfer_write %[[CHUNK]], %[[BUF]][%[[COL]]] {in_bounds = [true]} : vector<64xf32>, memref<4096xf32>
func.func @padded_row(%src: memref<?xf32, strided<[?], offset: ?>>, %buffer: memref<4096xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.000000e+00 : f32
  %mask = vector.create_mask %n : vector<4096xi1>
  %row = vector.transfer_read %src[%c0], %pad, %mask {in_bounds = [true]} : memref<?xf32, strided<[?], offset: ?>>, vector<4096xf32>
  vector.transfer_write %row, %buffer[%c0] {in_bounds = [true]} : vector<4096xf32>, memref<4096xf32>
  return
}

// The same with the valid lanes known (a 4100-wide row padded to its 8192 block).
// CHECK-LABEL: func.func @padded_row_constant_mask(
// CHECK-NOT: vector<8192x
// CHECK: scf.for
// CHECK: vector.create_mask %{{[a-z0-9_]+}} : vector<64xi1>
// CHECK-NOT: vector.constant_mask
func.func @padded_row_constant_mask(%src: memref<4100xf32, strided<[1], offset: ?>>, %buffer: memref<8192xf32>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.000000e+00 : f32
  %mask = vector.constant_mask [4100] : vector<8192xi1>
  %row = vector.transfer_read %src[%c0], %pad, %mask {in_bounds = [true]} : memref<4100xf32, strided<[1], offset: ?>>, vector<8192xf32>
  vector.transfer_write %row, %buffer[%c0] {in_bounds = [true]} : vector<8192xf32>, memref<8192xf32>
  return
}

// A padded row of one chunk stays one transfer.
// CHECK-LABEL: func.func @padded_short_row(
// CHECK: vector.transfer_read {{.*}} vector<64xf32>
// CHECK-NOT: scf.for
func.func @padded_short_row(%src: memref<?xf32>, %buffer: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.000000e+00 : f32
  %mask = vector.create_mask %n : vector<64xi1>
  %row = vector.transfer_read %src[%c0], %pad, %mask {in_bounds = [true]} : memref<?xf32>, vector<64xf32>
  vector.transfer_write %row, %buffer[%c0] {in_bounds = [true]} : vector<64xf32>, memref<64xf32>
  return
}

// A write to memory between the read and its write: the read cannot move down to the
// write, so the block move stays one transfer.
// CHECK-LABEL: func.func @written_between(
// CHECK: vector.transfer_read {{.*}} vector<4x16xf32>
// CHECK: memref.store
// CHECK: vector.transfer_write {{.*}} vector<4x16xf32>
func.func @written_between(%src: memref<?x?xf32>, %buffer: memref<4x16xf32>, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.000000e+00 : f32
  %mask = vector.create_mask %m, %n : vector<4x16xi1>
  %block = vector.transfer_read %src[%c0, %c0], %pad, %mask {in_bounds = [true, true]} : memref<?x?xf32>, vector<4x16xf32>
  memref.store %pad, %src[%c0, %c0] : memref<?x?xf32>
  vector.transfer_write %block, %buffer[%c0, %c0] {in_bounds = [true, true]} : vector<4x16xf32>, memref<4x16xf32>
  return
}

// A row slice that kept its unit dim, collapsed (a dynamic size: a dynamic stride): the
// chunks read the slice before the collapse, contiguous, the unit dim at 0.
// CHECK-LABEL: func.func @padded_collapsed_row(
// CHECK-SAME: %[[SRC:[a-z0-9_]+]]: memref<64x4100xf32>
// CHECK: %[[ROW:.*]] = memref.subview %[[SRC]]
// CHECK: scf.for %[[COL:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} {
// CHECK: vector.transfer_read %[[ROW]][%{{[a-z0-9_]+}}, %[[COL]]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {in_bounds = [true]} : memref<1x?xf32, strided<[4100, 1], offset: ?>>, vector<64xf32>
func.func @padded_collapsed_row(%src: memref<64x4100xf32>, %buffer: memref<4096xf32>, %r: index, %start: index, %n: index) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.000000e+00 : f32
  %row = memref.subview %src[%r, %start] [1, %n] [1, 1] : memref<64x4100xf32> to memref<1x?xf32, strided<[4100, 1], offset: ?>>
  %flat = memref.collapse_shape %row [[0, 1]] : memref<1x?xf32, strided<[4100, 1], offset: ?>> into memref<?xf32, strided<[?], offset: ?>>
  %mask = vector.create_mask %n : vector<4096xi1>
  %chunk = vector.transfer_read %flat[%c0], %pad, %mask {in_bounds = [true]} : memref<?xf32, strided<[?], offset: ?>>, vector<4096xf32>
  vector.transfer_write %chunk, %buffer[%c0] {in_bounds = [true]} : vector<4096xf32>, memref<4096xf32>
  return
}
