// A pair contraction tagged by helion-amx-pair-contractions, on buffers, becomes loops of
// AMX tiles: 2x2 accumulator tiles of 16x16 f32 where M and N hold two, each chunk of K
// steps (16 pairs, 32 K each) unrolled between loading the accumulators and storing them.
// RUN: helion-opt %s --split-input-file --helion-amx-tile-contractions | FileCheck %s

#a = affine_map<(m, n, k2, p) -> (m, k2, p)>
#b = affine_map<(m, n, k2, p) -> (k2, n, p)>
#c = affine_map<(m, n, k2, p) -> (m, n)>

// CHECK-LABEL: func.func @tiles(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: memref<64x256xbf16, strided<[1024, 1], offset: ?>>, %[[B:[a-z0-9_]+]]: memref<128x128xbf16>, %[[ACC:[a-z0-9_]+]]: memref<64x64xf32>
// CHECK: scf.for %[[M:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %[[M_STEP:[a-z0-9_]+]] {
// CHECK: scf.for %[[N:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} {
// CHECK: scf.for %[[K:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} {
// CHECK-COUNT-4: x86.amx.tile_load %[[ACC]]{{.*}} into !x86.amx.tile<16x16xf32>
// CHECK: x86.amx.tile_load %[[A]][%[[M]], %[[K]]] : memref<64x256xbf16, strided<[1024, 1], offset: ?>> into !x86.amx.tile<16x32xbf16>
// CHECK: x86.amx.tile_load %[[A]]
// CHECK: x86.amx.tile_load %[[B]]{{.*}} : memref<128x128xbf16> into !x86.amx.tile<16x32xbf16>
// CHECK: x86.amx.tile_load %[[B]]
// CHECK-COUNT-4: x86.amx.tile_mulf
// CHECK-COUNT-8: x86.amx.tile_load
// CHECK-COUNT-4: x86.amx.tile_mulf
// CHECK-COUNT-4: x86.amx.tile_store %[[ACC]]
// CHECK-NOT: linalg.generic
func.func @tiles(%a: memref<64x256xbf16, strided<[1024, 1], offset: ?>>, %b: memref<128x128xbf16>, %acc: memref<64x64xf32>) {
  %a3 = memref.expand_shape %a [[0], [1, 2]] output_shape [64, 128, 2] : memref<64x256xbf16, strided<[1024, 1], offset: ?>> into memref<64x128x2xbf16, strided<[1024, 2, 1], offset: ?>>
  %b3 = memref.expand_shape %b [[0], [1, 2]] output_shape [128, 64, 2] : memref<128x128xbf16> into memref<128x64x2xbf16>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%a3, %b3 : memref<64x128x2xbf16, strided<[1024, 2, 1], offset: ?>>, memref<128x64x2xbf16>) outs(%acc : memref<64x64xf32>) attrs = {helion.amx_tiles} {
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

#a = affine_map<(m, n, k2, p) -> (m, k2, p)>
#b = affine_map<(m, n, k2, p) -> (k2, n, p)>
#c = affine_map<(m, n, k2, p) -> (m, n)>

// One 16-row tile along M and N: one accumulator, one A and one B tile a step.
// CHECK-LABEL: func.func @one_tile(
// CHECK-COUNT-1: x86.amx.tile_load %{{[a-z0-9_]+}}{{.*}} into !x86.amx.tile<16x16xf32>
// CHECK-NOT: x86.amx.tile_load {{.*}}16x16xf32
// CHECK-COUNT-2: x86.amx.tile_mulf
// CHECK-NOT: x86.amx.tile_mulf
// CHECK: x86.amx.tile_store
// CHECK-NOT: x86.amx.tile_store
func.func @one_tile(%a: memref<16x64xbf16>, %b: memref<32x32xbf16>, %acc: memref<16x16xf32>) {
  %a3 = memref.expand_shape %a [[0], [1, 2]] output_shape [16, 32, 2] : memref<16x64xbf16> into memref<16x32x2xbf16>
  %b3 = memref.expand_shape %b [[0], [1, 2]] output_shape [32, 16, 2] : memref<32x32xbf16> into memref<32x16x2xbf16>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%a3, %b3 : memref<16x32x2xbf16>, memref<32x16x2xbf16>) outs(%acc : memref<16x16xf32>) attrs = {helion.amx_tiles} {
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

#a = affine_map<(m, n, k2, p) -> (m, k2, p)>
#b = affine_map<(m, n, k2, p) -> (k2, n, p)>
#c = affine_map<(m, n, k2, p) -> (m, n)>

// Kept as loops: an accumulator whose rows are not contiguous (a tile stores whole rows).
// CHECK-LABEL: func.func @strided_rows(
// CHECK-NOT: x86.amx
// CHECK: linalg.generic
func.func @strided_rows(%a: memref<16x64xbf16>, %b: memref<32x32xbf16>, %acc: memref<16x16xf32, strided<[64, 2]>>) {
  %a3 = memref.expand_shape %a [[0], [1, 2]] output_shape [16, 32, 2] : memref<16x64xbf16> into memref<16x32x2xbf16>
  %b3 = memref.expand_shape %b [[0], [1, 2]] output_shape [32, 16, 2] : memref<32x32xbf16> into memref<32x16x2xbf16>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%a3, %b3 : memref<16x32x2xbf16>, memref<32x16x2xbf16>) outs(%acc : memref<16x16xf32, strided<[64, 2]>>) attrs = {helion.amx_tiles} {
  ^bb0(%x: bf16, %y: bf16, %s: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %r = arith.addf %s, %p : f32
    linalg.yield %r : f32
  }
  return
}
