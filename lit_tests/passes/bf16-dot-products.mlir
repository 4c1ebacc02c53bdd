// A bf16 x bf16 -> f32 matmul with even K and N in blocks of 16 gets B packed in K pairs
// first: a loop over pair rows interleaves B's rows 2*k2 and 2*k2 + 1 and writes each 16
// columns' 32 lanes to their block's row (j * K/2 + k2 of [N/16 * K/2, 32]). The matmul
// becomes the contraction over the pairs, tiled into 8x(2x16) accumulator tiles held
// across a loop over K pairs: each step reads each block's packed row as one 32-lane
// vector from the packed tensor, broadcasts each row's A pair as one 32-bit word, and
// x86.avx512.dot (vdpbf16ps) accumulates 16 lanes at a time. Operands extended from bf16
// to f32 (hl.dot's casts) are read as bf16. Odd K, N of 8 and f32 matmuls stay as they
// are (N of 8 takes the interleaving path in 256-bit code: bf16-dot-products-256.mlir).
// RUN: helion-opt %s --helion-bf16-dot-products | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<16x8xbf16>, %[[B:[a-z0-9_]+]]: tensor<8x32xbf16>, %[[ACC:[a-z0-9_]+]]: tensor<16x32xf32>
// CHECK: %[[EMPTY:[a-z0-9_]+]] = tensor.empty() : tensor<8x32xbf16>
// CHECK: %[[PACKED:[a-z0-9_]+]] = scf.for %[[K2:[a-z0-9_]+]] = {{.*}} iter_args(%[[INTO:[a-z0-9_]+]] = %[[EMPTY]]) -> (tensor<8x32xbf16>)
// CHECK: %[[R0:[a-z0-9_]+]] = vector.transfer_read %[[B]]{{.*}} : tensor<8x32xbf16>, vector<32xbf16>
// CHECK: %[[R1:[a-z0-9_]+]] = vector.transfer_read %[[B]]{{.*}} : tensor<8x32xbf16>, vector<32xbf16>
// CHECK: %[[PAIRS:[a-z0-9_]+]] = vector.interleave %[[R0]], %[[R1]] : vector<32xbf16> -> vector<64xbf16>
// CHECK: vector.transfer_write %{{[a-z0-9_]+}}, %[[INTO]][%[[K2]], %{{[a-z0-9_]+}}]
// CHECK: %[[A3:[a-z0-9_]+]] = tensor.expand_shape %[[A]] {{\[}}[0], [1, 2]] output_shape [16, 4, 2]
// CHECK: %[[ACC3:[a-z0-9_]+]] = tensor.expand_shape %[[ACC]] {{\[}}[0], [1, 2]] output_shape [16, 2, 16]
// CHECK: scf.for %[[M:[a-z0-9_]+]] = {{.*}} iter_args(%{{[a-z0-9_]+}} = %[[ACC3]]) -> (tensor<16x2x16xf32>)
// CHECK: %[[TILE:[a-z0-9_]+]] = vector.transfer_read %{{.*}} : tensor<16x2x16xf32>, vector<8x2x16xf32>
// CHECK-NEXT: scf.for %[[STEP:[a-z0-9_]+]] = {{.*}} iter_args(%[[REGS:[a-z0-9_]+]] = %[[TILE]]) -> (vector<8x2x16xf32>)
// CHECK-NEXT: %[[AP:[a-z0-9_]+]] = vector.transfer_read %[[A3]][%[[M]], %[[STEP]], %{{[a-z0-9_]+}}]{{.*}} : tensor<16x4x2xbf16>, vector<8x1x2xbf16>
// CHECK: %[[ROW0:[a-z0-9_]+]] = arith.addi %{{[a-z0-9_]+}}, %[[STEP]]
// CHECK: %[[B0:[a-z0-9_]+]] = vector.transfer_read %[[PACKED]][%[[ROW0]], %{{[a-z0-9_]+}}]{{.*}} : tensor<8x32xbf16>, vector<32xbf16>
// CHECK: %[[ROW1:[a-z0-9_]+]] = arith.addi %{{[a-z0-9_]+}}, %[[STEP]]
// CHECK: %[[B1:[a-z0-9_]+]] = vector.transfer_read %[[PACKED]][%[[ROW1]], %{{[a-z0-9_]+}}]{{.*}} : tensor<8x32xbf16>, vector<32xbf16>
// CHECK: %[[A0:[a-z0-9_]+]] = vector.extract %[[AP]][0, 0] : vector<2xbf16> from vector<8x1x2xbf16>
// CHECK-NEXT: %[[WORD:[a-z0-9_]+]] = vector.bitcast %[[A0]] : vector<2xbf16> to vector<1xi32>
// CHECK-NEXT: %[[WORDS:[a-z0-9_]+]] = vector.broadcast %[[WORD]] : vector<1xi32> to vector<16xi32>
// CHECK-NEXT: %[[APAIRS:[a-z0-9_]+]] = vector.bitcast %[[WORDS]] : vector<16xi32> to vector<32xbf16>
// CHECK-NEXT: %[[BLOCK:[a-z0-9_]+]] = vector.extract %[[REGS]][0, 0] : vector<16xf32> from vector<8x2x16xf32>
// CHECK-NEXT: x86.avx512.dot %[[BLOCK]], %[[APAIRS]], %[[B0]] : vector<32xbf16> -> vector<16xf32>
// CHECK: x86.avx512.dot %{{[a-z0-9_]+}}, %[[APAIRS]], %[[B1]] : vector<32xbf16> -> vector<16xf32>
// CHECK-COUNT-14: x86.avx512.dot
// CHECK-NOT: x86.avx512.dot
// CHECK: vector.transfer_write
// CHECK: tensor.collapse_shape %{{[a-z0-9_]+}} {{\[}}[0], [1, 2]] : tensor<16x2x16xf32> into tensor<16x32xf32>
// CHECK-NOT: linalg.matmul
// CHECK: return
func.func @matmul(%a: tensor<16x8xbf16>, %b: tensor<8x32xbf16>, %acc: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x8xbf16>, tensor<8x32xbf16>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @extended(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<8x4xbf16>, %[[B:[a-z0-9_]+]]: tensor<4x16xbf16>
// CHECK-NOT: linalg.generic
// CHECK: vector.transfer_read %[[B]]{{.*}} : tensor<4x16xbf16>, vector<16xbf16>
// CHECK: tensor.expand_shape %[[A]]
// CHECK-COUNT-8: x86.avx512.dot
// CHECK-NOT: linalg
// CHECK: return
func.func @extended(%a: tensor<8x4xbf16>, %b: tensor<4x16xbf16>, %acc: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %ea = tensor.empty() : tensor<8x4xf32>
  %wa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<8x4xbf16>) outs(%ea : tensor<8x4xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<8x4xf32>
  %eb = tensor.empty() : tensor<4x16xf32>
  %wb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x16xbf16>) outs(%eb : tensor<4x16xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<4x16xf32>
  %0 = linalg.matmul ins(%wa, %wb : tensor<8x4xf32>, tensor<4x16xf32>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// CHECK-LABEL: func.func @odd_k(
// CHECK-NEXT: linalg.matmul
// CHECK-NEXT: return
func.func @odd_k(%a: tensor<16x3xbf16>, %b: tensor<3x32xbf16>, %acc: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x3xbf16>, tensor<3x32xbf16>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @narrow_n(
// CHECK-NEXT: linalg.matmul
// CHECK-NEXT: return
func.func @narrow_n(%a: tensor<16x8xbf16>, %b: tensor<8x8xbf16>, %acc: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x8xbf16>, tensor<8x8xbf16>) outs(%acc : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// CHECK-LABEL: func.func @f32(
// CHECK-NEXT: linalg.matmul
// CHECK-NEXT: return
func.func @f32(%a: tensor<16x8xf32>, %b: tensor<8x32xf32>, %acc: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x8xf32>, tensor<8x32xf32>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}
