// A loop-carried tile computed into a fresh tensor.empty each iteration is computed into
// the loop's iter_arg instead (bufferization then updates one buffer in place), and an
// input that is that init, read where it is written, is read through the init's block
// argument. An op that reads its empty init is left alone.
// RUN: helion-opt %s --helion-write-into-loop-carried | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @scaled(
// CHECK-SAME: %[[INIT:[a-z0-9_]+]]: tensor<8xf32>
// CHECK: scf.for %{{[a-z0-9_]+}} = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} iter_args(%[[ACC:[a-z0-9_]+]] = %[[INIT]])
// CHECK-NEXT: tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[NEXT:[a-z0-9_]+]] = linalg.generic {{.*}} ins(%[[ACC]] : tensor<8xf32>) outs(%[[ACC]] : tensor<8xf32>) {
// CHECK-NEXT: ^bb0(%{{[a-z0-9_]+}}: f32, %[[OUT:[a-z0-9_]+]]: f32):
// CHECK-NEXT: %[[TWICE:[a-z0-9_]+]] = arith.addf %[[OUT]], %[[OUT]] : f32
// CHECK-NEXT: linalg.yield %[[TWICE]] : f32
// CHECK: scf.yield %[[NEXT]] : tensor<8xf32>
func.func @scaled(%init: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<8xf32>) {
    %e = tensor.empty() : tensor<8xf32>
    %next = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%acc : tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %in, %in : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    scf.yield %next : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// CHECK-LABEL: func.func @reads_its_init(
// CHECK: %[[E:[a-z0-9_]+]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[E]] : tensor<8xf32>)
func.func @reads_its_init(%init: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<8xf32>) {
    %e = tensor.empty() : tensor<8xf32>
    %next = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%acc : tensor<8xf32>) outs(%e : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    scf.yield %next : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
