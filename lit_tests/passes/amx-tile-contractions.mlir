// A pair contraction tagged by helion-amx-pair-contractions, on buffers, becomes loops of
// AMX tiles: 2x2 accumulator tiles of 16x16 f32 where M and N hold two; for each 32-row
// strip of A, each chunk of up to 8 K steps (16 pairs, 32 K each) is the middle loop, and
// for each group of accumulators along N the chunk is unrolled between loading them and
// storing them. B's tiles are 1 KB blocks of the packed buffer: tile j's step s at row
// j * K/2 + 16 s.
// RUN: helion-opt %s --split-input-file --helion-amx-tile-contractions | FileCheck %s

#a = affine_map<(m, j, c, k2, p) -> (m, k2, p)>
#b = affine_map<(m, j, c, k2, p) -> (j, k2, c, p)>
#c = affine_map<(m, j, c, k2, p) -> (m, j, c)>

// K = 320: one chunk of 8 steps, then one of the 2 left.
// CHECK-LABEL: func.func @tiles(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: memref<64x320xbf16, strided<[1024, 1], offset: ?>>, %[[B:[a-z0-9_]+]]: memref<640x32xbf16>, %[[ACC:[a-z0-9_]+]]: memref<64x64xf32>
// CHECK: scf.for %[[M:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} {
// CHECK: scf.for %[[K:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} {
// CHECK: scf.for %[[N:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} {
// CHECK: x86.amx.tile_load %[[ACC]][%[[M]], %[[N]]] : memref<64x64xf32> into !x86.amx.tile<16x16xf32>
// CHECK-COUNT-3: x86.amx.tile_load %[[ACC]]{{.*}} into !x86.amx.tile<16x16xf32>
// CHECK: x86.amx.tile_load %[[A]][%[[M]], %[[K]]] : memref<64x320xbf16, strided<[1024, 1], offset: ?>> into !x86.amx.tile<16x32xbf16>
// CHECK: x86.amx.tile_load %[[A]]
// CHECK: x86.amx.tile_load %[[B]][%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}] : memref<640x32xbf16> into !x86.amx.tile<16x32xbf16>
// CHECK: x86.amx.tile_load %[[B]]
// CHECK-COUNT-4: x86.amx.tile_mulf
// CHECK-COUNT-7: x86.amx.tile_mulf
// CHECK-COUNT-21: x86.amx.tile_mulf
// CHECK-NOT: x86.amx.tile_mulf
// CHECK-COUNT-4: x86.amx.tile_store %[[ACC]]
// CHECK: }
// CHECK: }
// CHECK: scf.for %{{[a-z0-9_]+}} = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} {
// CHECK-COUNT-4: x86.amx.tile_load %[[ACC]]
// CHECK-COUNT-8: x86.amx.tile_mulf
// CHECK-NOT: x86.amx.tile_mulf
// CHECK-COUNT-4: x86.amx.tile_store %[[ACC]]
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.expand_shape
func.func @tiles(%a: memref<64x320xbf16, strided<[1024, 1], offset: ?>>, %b: memref<640x32xbf16>, %acc: memref<64x64xf32>) {
  %acc3 = memref.expand_shape %acc [[0], [1, 2]] output_shape [64, 4, 16] : memref<64x64xf32> into memref<64x4x16xf32>
  %a3 = memref.expand_shape %a [[0], [1, 2]] output_shape [64, 160, 2] : memref<64x320xbf16, strided<[1024, 1], offset: ?>> into memref<64x160x2xbf16, strided<[1024, 2, 1], offset: ?>>
  %b4 = memref.expand_shape %b [[0, 1], [2, 3]] output_shape [4, 160, 16, 2] : memref<640x32xbf16> into memref<4x160x16x2xbf16>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%a3, %b4 : memref<64x160x2xbf16, strided<[1024, 2, 1], offset: ?>>, memref<4x160x16x2xbf16>) outs(%acc3 : memref<64x4x16xf32>) attrs = {helion.amx_tiles} {
  ^bb0(%x: bf16, %y: bf16, %s: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %r = arith.addf %s, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(m, j, c, k2, p) -> (m, k2, p)>
#b = affine_map<(m, j, c, k2, p) -> (j, k2, c, p)>
#c = affine_map<(m, j, c, k2, p) -> (m, j, c)>

// One 16-row tile along M and N: one accumulator, one A and one B tile a step.
// CHECK-LABEL: func.func @one_tile(
// CHECK-COUNT-1: x86.amx.tile_load %{{[a-z0-9_]+}}{{.*}} into !x86.amx.tile<16x16xf32>
// CHECK-NOT: x86.amx.tile_load {{.*}}16x16xf32
// CHECK-COUNT-2: x86.amx.tile_mulf
// CHECK-NOT: x86.amx.tile_mulf
// CHECK: x86.amx.tile_store
// CHECK-NOT: x86.amx.tile_store
func.func @one_tile(%a: memref<16x64xbf16>, %b: memref<32x32xbf16>, %acc: memref<16x16xf32>) {
  %acc3 = memref.expand_shape %acc [[0], [1, 2]] output_shape [16, 1, 16] : memref<16x16xf32> into memref<16x1x16xf32>
  %a3 = memref.expand_shape %a [[0], [1, 2]] output_shape [16, 32, 2] : memref<16x64xbf16> into memref<16x32x2xbf16>
  %b4 = memref.expand_shape %b [[0, 1], [2, 3]] output_shape [1, 32, 16, 2] : memref<32x32xbf16> into memref<1x32x16x2xbf16>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%a3, %b4 : memref<16x32x2xbf16>, memref<1x32x16x2xbf16>) outs(%acc3 : memref<16x1x16xf32>) attrs = {helion.amx_tiles} {
  ^bb0(%x: bf16, %y: bf16, %s: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %r = arith.addf %s, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#a = affine_map<(m, j, c, k2, p) -> (m, k2, p)>
#b = affine_map<(m, j, c, k2, p) -> (j, k2, c, p)>
#c = affine_map<(m, j, c, k2, p) -> (m, j, c)>

// Kept as loops: an accumulator whose rows are not contiguous (a tile stores whole rows).
// CHECK-LABEL: func.func @strided_rows(
// CHECK-NOT: x86.amx
// CHECK: linalg.generic
func.func @strided_rows(%a: memref<16x64xbf16>, %b: memref<32x32xbf16>, %acc: memref<16x16xf32, strided<[64, 2]>>) {
  %acc3 = memref.expand_shape %acc [[0], [1, 2]] output_shape [16, 1, 16] : memref<16x16xf32, strided<[64, 2]>> into memref<16x1x16xf32, strided<[64, 32, 2]>>
  %a3 = memref.expand_shape %a [[0], [1, 2]] output_shape [16, 32, 2] : memref<16x64xbf16> into memref<16x32x2xbf16>
  %b4 = memref.expand_shape %b [[0, 1], [2, 3]] output_shape [1, 32, 16, 2] : memref<32x32xbf16> into memref<1x32x16x2xbf16>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%a3, %b4 : memref<16x32x2xbf16>, memref<1x32x16x2xbf16>) outs(%acc3 : memref<16x1x16xf32, strided<[64, 32, 2]>>) attrs = {helion.amx_tiles} {
  ^bb0(%x: bf16, %y: bf16, %s: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %r = arith.addf %s, %p : f32
    linalg.yield %r : f32
  }
  return
}
