// A K loop whose accumulator is stored only in its valid corner (the grid's last row of
// 64-row blocks holding 16 rows) carries only that corner: A is padded along K alone and
// the product has the valid rows only.
// RUN: helion-opt %s --helion-trim-padded-accumulators | FileCheck %s

#k_block = affine_map<(d0) -> (d0 * 64)>
#k_size = affine_map<(d0) -> (d0 * -64 + 80, 64)>

// CHECK-LABEL: func.func @last_rows(
// CHECK: %[[INIT:[a-z0-9_]+]] = linalg.fill
// CHECK: %[[CORNER:[a-z0-9_]+]] = tensor.extract_slice %[[INIT]][0, 0] [16, 64] [1, 1] : tensor<64x64xf32> to tensor<16x64xf32>
// CHECK: %[[LOOP:[a-z0-9_]+]] = affine.for %{{[a-z0-9_]+}} = 0 to 2 iter_args(%[[ACC:[a-z0-9_]+]] = %[[CORNER]]) -> (tensor<16x64xf32>)
// CHECK: tensor.pad %{{[a-z0-9_]+}} low[0, 0] high[%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}]
// CHECK: } : tensor<16x?xf32> to tensor<16x64xf32>
// CHECK: linalg.matmul ins(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : tensor<16x64xf32>, tensor<64x64xf32>) outs(%[[ACC]] : tensor<16x64xf32>) -> tensor<16x64xf32>
// CHECK: return %[[LOOP]] : tensor<16x64xf32>
func.func @last_rows(%x: tensor<16x80xf32>, %y: tensor<80x64xf32>) -> tensor<16x64xf32> {
  %c48 = arith.constant 48 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = affine.for %k = 0 to 2 iter_args(%a = %acc) -> (tensor<64x64xf32>) {
    %off = affine.apply #k_block(%k)
    %size = affine.min #k_size(%k)
    %tail = arith.subi %c64, %size : index
    %lhs = tensor.extract_slice %x[0, %off] [16, %size] [1, 1] : tensor<16x80xf32> to tensor<16x?xf32>
    %lhs_padded = tensor.pad %lhs low[0, 0] high[%c48, %tail] {
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f32
    } : tensor<16x?xf32> to tensor<64x64xf32>
    %rhs = tensor.extract_slice %y[%off, 0] [%size, 64] [1, 1] : tensor<80x64xf32> to tensor<?x64xf32>
    %rhs_padded = tensor.pad %rhs low[0, 0] high[%tail, 0] {
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f32
    } : tensor<?x64xf32> to tensor<64x64xf32>
    %mm = linalg.matmul ins(%lhs_padded, %rhs_padded : tensor<64x64xf32>, tensor<64x64xf32>) outs(%a : tensor<64x64xf32>) -> tensor<64x64xf32>
    affine.yield %mm : tensor<64x64xf32>
  }
  %out = tensor.extract_slice %r[0, 0] [16, 64] [1, 1] : tensor<64x64xf32> to tensor<16x64xf32>
  return %out : tensor<16x64xf32>
}

// The stored corner is not what the pads leave valid (12 of 16 rows): the loop stays.
// CHECK-LABEL: func.func @other_corner(
// CHECK: affine.for %{{[a-z0-9_]+}} = 0 to 2 iter_args(%{{[a-z0-9_]+}} = %{{[a-z0-9_]+}}) -> (tensor<64x64xf32>)
// CHECK: tensor.extract_slice %{{[a-z0-9_]+}}[0, 0] [12, 64] [1, 1] : tensor<64x64xf32> to tensor<12x64xf32>
func.func @other_corner(%x: tensor<16x128xf32>, %y: tensor<128x64xf32>) -> tensor<12x64xf32> {
  %c48 = arith.constant 48 : index
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = affine.for %k = 0 to 2 iter_args(%a = %acc) -> (tensor<64x64xf32>) {
    %off = affine.apply #k_block(%k)
    %lhs = tensor.extract_slice %x[0, %off] [16, 64] [1, 1] : tensor<16x128xf32> to tensor<16x64xf32>
    %lhs_padded = tensor.pad %lhs low[0, 0] high[%c48, 0] {
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f32
    } : tensor<16x64xf32> to tensor<64x64xf32>
    %rhs = tensor.extract_slice %y[%off, 0] [64, 64] [1, 1] : tensor<128x64xf32> to tensor<64x64xf32>
    %mm = linalg.matmul ins(%lhs_padded, %rhs : tensor<64x64xf32>, tensor<64x64xf32>) outs(%a : tensor<64x64xf32>) -> tensor<64x64xf32>
    affine.yield %mm : tensor<64x64xf32>
  }
  %out = tensor.extract_slice %r[0, 0] [12, 64] [1, 1] : tensor<64x64xf32> to tensor<12x64xf32>
  return %out : tensor<12x64xf32>
}
