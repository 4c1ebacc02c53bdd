// In a module of 256-bit vectors (helion.vector_width) each dot product fills a 256-bit
// register: 8 f32 lanes from 8 interleaved B pairs (LLVM cannot select the 512-bit
// vdpbf16ps there), so N of 8 takes dot products too, B's rows interleaved in registers.
// Where B packs (N of 16), each block's packed row of 16 pairs feeds two 8-lane dots.
// RUN: helion-opt %s --helion-bf16-dot-products | FileCheck %s

// CHECK-LABEL: func.func @narrow(
// CHECK: %[[BP:[a-z0-9_]+]] = vector.transfer_read {{.*}} : tensor<4x8xbf16>, vector<2x8xbf16>
// CHECK: vector.shuffle %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15] : vector<8xbf16>, vector<8xbf16>
// CHECK: vector.broadcast %{{[a-z0-9_]+}} : vector<1xi32> to vector<8xi32>
// CHECK: x86.avx512.dot %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : vector<16xbf16> -> vector<8xf32>
// CHECK-NOT: linalg.matmul
// CHECK: return
module attributes {helion.vector_width = 256 : i64} {
  func.func @narrow(%a: tensor<8x4xbf16>, %b: tensor<4x8xbf16>, %acc: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = linalg.matmul ins(%a, %b : tensor<8x4xbf16>, tensor<4x8xbf16>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }

  // CHECK-LABEL: func.func @packed(
  // CHECK: vector.interleave
  // CHECK: vector.transfer_read %{{.*}} : tensor<4x32xbf16>, vector<32xbf16>
  // CHECK: %[[LOW:[a-z0-9_]+]] = vector.extract_strided_slice %{{[a-z0-9_]+}} {offsets = [0], sizes = [16], strides = [1]} : vector<32xbf16> to vector<16xbf16>
  // CHECK: %[[HIGH:[a-z0-9_]+]] = vector.extract_strided_slice %{{[a-z0-9_]+}} {offsets = [16], sizes = [16], strides = [1]} : vector<32xbf16> to vector<16xbf16>
  // CHECK: x86.avx512.dot %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[LOW]] : vector<16xbf16> -> vector<8xf32>
  // CHECK: x86.avx512.dot %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[HIGH]] : vector<16xbf16> -> vector<8xf32>
  // CHECK-NOT: linalg.matmul
  // CHECK: return
  func.func @packed(%a: tensor<8x8xbf16>, %b: tensor<8x16xbf16>, %acc: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %0 = linalg.matmul ins(%a, %b : tensor<8x8xbf16>, tensor<8x16xbf16>) outs(%acc : tensor<8x16xf32>) -> tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }
}
