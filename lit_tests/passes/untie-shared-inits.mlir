// Each use of an init (tensor.empty, or a fill of one) gets its own copy, so that
// bufferization gives each result its own buffer; an input read twice is left alone.
// RUN: helion-opt %s --helion-untie-shared-inits | FileCheck %s

// CHECK-LABEL: func.func @shared_accumulator(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: tensor<4xf32>
// CHECK-NEXT: %[[ZERO:[a-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[E0:[a-z0-9_]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[E1:[a-z0-9_]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[ACC0:[a-z0-9_]+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E0]] : tensor<4xf32>)
// CHECK-NEXT: %[[ACC1:[a-z0-9_]+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E1]] : tensor<4xf32>)
// CHECK-NEXT: linalg.add ins(%[[A]], %[[A]] : tensor<4xf32>, tensor<4xf32>) outs(%[[ACC0]] : tensor<4xf32>)
// CHECK-NEXT: linalg.mul ins(%[[A]], %[[A]] : tensor<4xf32>, tensor<4xf32>) outs(%[[ACC1]] : tensor<4xf32>)
func.func @shared_accumulator(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %0 = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%acc : tensor<4xf32>) -> tensor<4xf32>
  %1 = linalg.mul ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%acc : tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// A buffer written with data (a padded row read from memory), read twice: both reads
// share it; a copy per use would copy the row twice.
// CHECK-LABEL: func.func @data_read_twice(
// CHECK: tensor.empty
// CHECK-NOT: tensor.empty
// CHECK: vector.transfer_write
// CHECK-NOT: vector.transfer_write
// CHECK: return
func.func @data_read_twice(%x: tensor<?xf32>, %n: index) -> (vector<32xf32>, vector<32xf32>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %pad = arith.constant 0.0 : f32
  %mask = vector.create_mask %n : vector<64xi1>
  %row = vector.transfer_read %x[%c0], %pad, %mask {in_bounds = [true]} : tensor<?xf32>, vector<64xf32>
  %e = tensor.empty() : tensor<64xf32>
  %buffer = vector.transfer_write %row, %e[%c0] {in_bounds = [true]} : vector<64xf32>, tensor<64xf32>
  %first = vector.transfer_read %buffer[%c0], %pad {in_bounds = [true]} : tensor<64xf32>, vector<32xf32>
  %second = vector.transfer_read %buffer[%c32], %pad {in_bounds = [true]} : tensor<64xf32>, vector<32xf32>
  return %first, %second : vector<32xf32>, vector<32xf32>
}
