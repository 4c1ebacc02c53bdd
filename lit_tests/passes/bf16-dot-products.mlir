// A bf16 x bf16 -> f32 matmul with even K and N in whole 16-lane registers is tiled into
// 8x32 accumulator tiles held across a loop over K pairs; per pair, B's two rows are
// interleaved into (B[k, n], B[k+1, n]) pairs, each row's A pair is broadcast as one
// 32-bit word, and x86.avx512.dot (vdpbf16ps) accumulates 16 lanes at a time. Operands
// extended from bf16 to f32 (hl.dot's casts) are read as bf16. Odd K, N of 8 and f32
// matmuls stay as they are.
// RUN: helion-opt %s --helion-bf16-dot-products | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<16x8xbf16>, %[[B:[a-z0-9_]+]]: tensor<8x32xbf16>, %[[ACC:[a-z0-9_]+]]: tensor<16x32xf32>
// CHECK: scf.for %[[M:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %[[C8:[a-z0-9_]+]] iter_args(%{{[a-z0-9_]+}} = %[[ACC]])
// CHECK: %[[TILE:[a-z0-9_]+]] = vector.transfer_read %{{.*}} : tensor<16x32xf32>, vector<8x32xf32>
// CHECK-NEXT: scf.for %[[K:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %[[C2:[a-z0-9_]+]] iter_args(%[[REGS:[a-z0-9_]+]] = %[[TILE]]) -> (vector<8x32xf32>)
// CHECK-NEXT: %[[AP:[a-z0-9_]+]] = vector.transfer_read %[[A]][%[[M]], %[[K]]], {{.*}} : tensor<16x8xbf16>, vector<8x2xbf16>
// CHECK-NEXT: %[[BP:[a-z0-9_]+]] = vector.transfer_read %[[B]][%[[K]], %{{[a-z0-9_]+}}], {{.*}} : tensor<8x32xbf16>, vector<2x32xbf16>
// CHECK-NEXT: %[[B0:[a-z0-9_]+]] = vector.extract %[[BP]][0] : vector<32xbf16> from vector<2x32xbf16>
// CHECK-NEXT: %[[B1:[a-z0-9_]+]] = vector.extract %[[BP]][1] : vector<32xbf16> from vector<2x32xbf16>
// CHECK-NEXT: %[[LOW:[a-z0-9_]+]] = vector.shuffle %[[B0]], %[[B1]] [0, 32, 1, 33, 2, 34,
// CHECK-NEXT: %[[HIGH:[a-z0-9_]+]] = vector.shuffle %[[B0]], %[[B1]] [16, 48, 17, 49, 18, 50,
// CHECK-NEXT: %[[A0:[a-z0-9_]+]] = vector.extract %[[AP]][0] : vector<2xbf16> from vector<8x2xbf16>
// CHECK-NEXT: %[[WORD:[a-z0-9_]+]] = vector.bitcast %[[A0]] : vector<2xbf16> to vector<1xi32>
// CHECK-NEXT: %[[WORDS:[a-z0-9_]+]] = vector.broadcast %[[WORD]] : vector<1xi32> to vector<16xi32>
// CHECK-NEXT: %[[PAIRS:[a-z0-9_]+]] = vector.bitcast %[[WORDS]] : vector<16xi32> to vector<32xbf16>
// CHECK-NEXT: %[[ROW:[a-z0-9_]+]] = vector.extract %[[REGS]][0] : vector<32xf32> from vector<8x32xf32>
// CHECK-NEXT: %[[PART:[a-z0-9_]+]] = vector.extract_strided_slice %[[ROW]] {offsets = [0], sizes = [16], strides = [1]}
// CHECK-NEXT: x86.avx512.dot %[[PART]], %[[PAIRS]], %[[LOW]] : vector<32xbf16> -> vector<16xf32>
// CHECK: x86.avx512.dot %{{[a-z0-9_]+}}, %[[PAIRS]], %[[HIGH]] : vector<32xbf16> -> vector<16xf32>
// CHECK-COUNT-14: x86.avx512.dot
// CHECK-NOT: x86.avx512.dot
// CHECK: vector.transfer_write
// CHECK-NOT: linalg.matmul
// CHECK: return
func.func @matmul(%a: tensor<16x8xbf16>, %b: tensor<8x32xbf16>, %acc: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<16x8xbf16>, tensor<8x32xbf16>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}

// CHECK-LABEL: func.func @extended(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<8x4xbf16>, %[[B:[a-z0-9_]+]]: tensor<4x16xbf16>
// CHECK-NOT: linalg.generic
// CHECK: vector.transfer_read %[[A]]{{.*}} : tensor<8x4xbf16>, vector<8x2xbf16>
// CHECK: vector.transfer_read %[[B]]{{.*}} : tensor<4x16xbf16>, vector<2x16xbf16>
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
