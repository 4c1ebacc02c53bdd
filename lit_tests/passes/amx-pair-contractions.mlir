// A bf16 x bf16 -> f32 matmul of whole AMX tiles (M, N multiples of 16, K of 32) gets B
// packed in K pairs, one 1 KB block per B tile (row j * K/2 + k2 of [N/16 * K/2, 32]
// interleaves columns 16j..16j+15 of B's rows 2*k2 and 2*k2 + 1) and becomes the
// contraction over the pairs, tagged for helion-amx-tile-contractions; other matmuls are
// left to the dot products or the f32 schedule.
// RUN: helion-opt %s --split-input-file --helion-amx-pair-contractions | FileCheck %s

// CHECK-LABEL: func.func @pairs(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<64x256xbf16>, %[[B:[a-z0-9_]+]]: tensor<256x64xbf16>, %[[ACC:[a-z0-9_]+]]: tensor<64x64xf32>
// CHECK: %[[EMPTY:[a-z0-9_]+]] = tensor.empty() : tensor<512x32xbf16>
// CHECK: %[[PACKED:[a-z0-9_]+]] = scf.for %[[K2:[a-z0-9_]+]] = {{.*}} iter_args(%[[INTO:[a-z0-9_]+]] = %[[EMPTY]]) -> (tensor<512x32xbf16>)
// CHECK: %[[FIRST:[a-z0-9_]+]] = arith.muli %[[K2]]
// CHECK: %[[SECOND:[a-z0-9_]+]] = arith.addi %[[FIRST]]
// CHECK: %[[R0:[a-z0-9_]+]] = vector.transfer_read %[[B]][%[[FIRST]], %{{[a-z0-9_]+}}]{{.*}} : tensor<256x64xbf16>, vector<64xbf16>
// CHECK: %[[R1:[a-z0-9_]+]] = vector.transfer_read %[[B]][%[[SECOND]], %{{[a-z0-9_]+}}]{{.*}} : tensor<256x64xbf16>, vector<64xbf16>
// CHECK: %[[PAIRS:[a-z0-9_]+]] = vector.interleave %[[R0]], %[[R1]] : vector<64xbf16> -> vector<128xbf16>
// Each 16 columns' 32 lanes go to their tile's block: rows k2, 128 + k2, 256 + k2, 384 + k2.
// CHECK: %[[T0:[a-z0-9_]+]] = vector.extract_strided_slice %[[PAIRS]] {offsets = [0], sizes = [32], strides = [1]}
// CHECK: %[[W0:[a-z0-9_]+]] = vector.transfer_write %[[T0]], %[[INTO]][%[[K2]], %{{[a-z0-9_]+}}]
// CHECK: %[[C128:[a-z0-9_]+]] = arith.constant 128 : index
// CHECK: %[[ROW1:[a-z0-9_]+]] = arith.addi %[[K2]], %[[C128]]
// CHECK: %[[T1:[a-z0-9_]+]] = vector.extract_strided_slice %[[PAIRS]] {offsets = [32], sizes = [32], strides = [1]}
// CHECK: vector.transfer_write %[[T1]], %[[W0]][%[[ROW1]], %{{[a-z0-9_]+}}]
// CHECK-COUNT-2: vector.transfer_write
// CHECK: %[[A3:[a-z0-9_]+]] = tensor.expand_shape %[[A]] {{\[}}[0], [1, 2]] output_shape [64, 128, 2]
// CHECK: %[[B4:[a-z0-9_]+]] = tensor.expand_shape %[[PACKED]] {{\[}}[0, 1], [2, 3]] output_shape [4, 128, 16, 2]
// CHECK: %[[ACC3:[a-z0-9_]+]] = tensor.expand_shape %[[ACC]] {{\[}}[0], [1, 2]] output_shape [64, 4, 16]
// CHECK: %[[SUM:[a-z0-9_]+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[A3]], %[[B4]] : tensor<64x128x2xbf16>, tensor<4x128x16x2xbf16>) outs(%[[ACC3]] : tensor<64x4x16xf32>) attrs =  {helion.amx_tiles}
// CHECK: %[[C:[a-z0-9_]+]] = tensor.collapse_shape %[[SUM]] {{\[}}[0], [1, 2]] : tensor<64x4x16xf32> into tensor<64x64xf32>
// CHECK: return %[[C]]
// CHECK-NOT: linalg.matmul
func.func @pairs(%a: tensor<64x256xbf16>, %b: tensor<256x64xbf16>, %acc: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x256xbf16>, tensor<256x64xbf16>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// hl.dot's bf16 -> f32 casts of its operands are read through, and so is the contiguous
// copy of B (packed_operands.py): the pairs are packed from B's block itself, which lets
// the programs of a column share the pack (shared_strips.py).
// CHECK-LABEL: func.func @through_casts_from_the_copy(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<16x64xbf16>, %[[B:[a-z0-9_]+]]: tensor<64x32xbf16>
// CHECK-NOT: arith.extf
// CHECK: vector.transfer_read %[[B]]
// CHECK: tensor.expand_shape %[[A]]
// CHECK-NOT: linalg.matmul
// CHECK: linalg.generic {{.*}}attrs =  {helion.amx_tiles}
// CHECK-NOT: linalg.generic
func.func @through_casts_from_the_copy(%a: tensor<16x64xbf16>, %b: tensor<64x32xbf16>, %acc: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %e = tensor.empty() : tensor<64x32xbf16>
  %copy = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<64x32xbf16>) outs(%e : tensor<64x32xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  } -> tensor<64x32xbf16>
  %ea = tensor.empty() : tensor<16x64xf32>
  %wide = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<16x64xbf16>) outs(%ea : tensor<16x64xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<16x64xf32>
  %eb = tensor.empty() : tensor<64x32xf32>
  %wide_b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%copy : tensor<64x32xbf16>) outs(%eb : tensor<64x32xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<64x32xf32>
  %r = linalg.matmul ins(%wide, %wide_b : tensor<16x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// Kept: K not in whole 32-deep steps, M or N not in whole 16-row tiles, f32 operands.
// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-4: linalg.matmul
// CHECK-NOT: helion.amx_tiles
func.func @kept(%a: tensor<16x48xbf16>, %b: tensor<48x16xbf16>, %acc: tensor<16x16xf32>,
                %a8: tensor<8x32xbf16>, %b24: tensor<32x24xbf16>, %acc8: tensor<8x24xf32>,
                %af: tensor<16x32xf32>, %bf: tensor<32x16xf32>) -> (tensor<16x16xf32>, tensor<8x24xf32>, tensor<16x24xf32>, tensor<16x16xf32>) {
  %0 = linalg.matmul ins(%a, %b : tensor<16x48xbf16>, tensor<48x16xbf16>) outs(%acc : tensor<16x16xf32>) -> tensor<16x16xf32>
  %1 = linalg.matmul ins(%a8, %b24 : tensor<8x32xbf16>, tensor<32x24xbf16>) outs(%acc8 : tensor<8x24xf32>) -> tensor<8x24xf32>
  %e = tensor.empty() : tensor<16x24xf32>
  %a16 = tensor.empty() : tensor<16x32xbf16>
  %2 = linalg.matmul ins(%a16, %b24 : tensor<16x32xbf16>, tensor<32x24xbf16>) outs(%e : tensor<16x24xf32>) -> tensor<16x24xf32>
  %3 = linalg.matmul ins(%af, %bf : tensor<16x32xf32>, tensor<32x16xf32>) outs(%acc : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0, %1, %2, %3 : tensor<16x16xf32>, tensor<8x24xf32>, tensor<16x24xf32>, tensor<16x16xf32>
}
