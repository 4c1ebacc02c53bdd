// B's K pairs packed for AMX tiles (amx_tiles.py: two rows read, interleaved, each 16
// columns' lanes written to their tile's block) depend on no program of a column of output
// tiles: the programs run in groups that pack once, and their tile loads read the group's
// pack (4 programs on 2 threads: 2 groups of 2).
// RUN: helion-opt %s --helion-share-packed-strips | FileCheck %s

// CHECK-LABEL: func.func @amx_pairs(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: memref<64x64xbf16>, %[[B:[a-z0-9_]+]]: memref<64x32xbf16>
// CHECK: scf.forall (%{{[a-z0-9_]+}}) in (2) {
// CHECK-NEXT: %[[STRIP:[a-z0-9_]+]] = memref.alloc() {alignment = 64 : i64} : memref<1x64x32xbf16>
// CHECK: vector.transfer_read %[[B]]
// CHECK: vector.transfer_read %[[B]]
// CHECK: vector.interleave
// CHECK: vector.extract_strided_slice
// CHECK: vector.transfer_write
// CHECK: scf.for %{{[a-z0-9_]+}} =
// CHECK-NOT: vector.interleave
// CHECK: %[[PACK:[a-z0-9_]+]] = memref.subview %[[STRIP]]
// CHECK: x86.amx.tile_load %[[PACK]]
// CHECK: return
module attributes {helion.threads = 2 : i64} {
func.func @amx_pairs(%a: memref<64x64xbf16>, %b: memref<64x32xbf16>, %out: memref<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %pad = arith.constant 0.0 : bf16
  %zeros = arith.constant dense<0.0> : vector<1x32xf32>
  scf.forall (%m) in (4) {
    %row = arith.muli %m, %c16 : index
    %acc = memref.alloc() {alignment = 64 : i64} : memref<16x32xf32>
    scf.for %r = %c0 to %c16 step %c1 {
      vector.transfer_write %zeros, %acc[%r, %c0] {in_bounds = [true, true]} : vector<1x32xf32>, memref<16x32xf32>
    }
    %rows = memref.subview %a[%row, 0] [16, 64] [1, 1] : memref<64x64xbf16> to memref<16x64xbf16, strided<[64, 1], offset: ?>>
    %pairs = memref.alloc() {alignment = 64 : i64} : memref<64x32xbf16>
    scf.for %k2 = %c0 to %c32 step %c1 {
      %first = arith.muli %k2, %c2 : index
      %second = arith.addi %first, %c1 : index
      %r0 = vector.transfer_read %b[%first, %c0], %pad {in_bounds = [true]} : memref<64x32xbf16>, vector<32xbf16>
      %r1 = vector.transfer_read %b[%second, %c0], %pad {in_bounds = [true]} : memref<64x32xbf16>, vector<32xbf16>
      %both = vector.interleave %r0, %r1 : vector<32xbf16> -> vector<64xbf16>
      %t0 = vector.extract_strided_slice %both {offsets = [0], sizes = [32], strides = [1]} : vector<64xbf16> to vector<32xbf16>
      vector.transfer_write %t0, %pairs[%k2, %c0] {in_bounds = [true]} : vector<32xbf16>, memref<64x32xbf16>
      %block1 = arith.addi %k2, %c32 : index
      %t1 = vector.extract_strided_slice %both {offsets = [32], sizes = [32], strides = [1]} : vector<64xbf16> to vector<32xbf16>
      vector.transfer_write %t1, %pairs[%block1, %c0] {in_bounds = [true]} : vector<32xbf16>, memref<64x32xbf16>
    }
    %c0_tile = x86.amx.tile_load %acc[%c0, %c0] : memref<16x32xf32> into !x86.amx.tile<16x16xf32>
    %a_tile = x86.amx.tile_load %rows[%c0, %c0] : memref<16x64xbf16, strided<[64, 1], offset: ?>> into !x86.amx.tile<16x32xbf16>
    %b_tile = x86.amx.tile_load %pairs[%c0, %c0] : memref<64x32xbf16> into !x86.amx.tile<16x32xbf16>
    %sum = x86.amx.tile_mulf %a_tile, %b_tile, %c0_tile : !x86.amx.tile<16x32xbf16>, !x86.amx.tile<16x32xbf16>, !x86.amx.tile<16x16xf32>
    x86.amx.tile_store %acc[%c0, %c0], %sum : memref<16x32xf32>, !x86.amx.tile<16x16xf32>
    %dest = memref.subview %out[%row, 0] [16, 32] [1, 1] : memref<64x32xf32> to memref<16x32xf32, strided<[32, 1], offset: ?>>
    memref.copy %acc, %dest : memref<16x32xf32> to memref<16x32xf32, strided<[32, 1], offset: ?>>
  }
  return
}
}
