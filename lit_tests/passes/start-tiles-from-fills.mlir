// Register tiles that cover a constant-filled accumulator exactly, each reading its part
// before writing it, start from the constant: the read becomes a splat and the fill (a
// loop of row writes, or a linalg.fill) goes; so do a block's peeled last rows. Tiles that
// leave part of the accumulator unwritten, or read it elsewhere, keep the fill.
// RUN: helion-opt %s --helion-start-tiles-from-fills | FileCheck %s

// CHECK-LABEL: func.func @filled_rows(
// CHECK-NOT: vector<1x64xf32>, tensor<16x64xf32>
// CHECK: %[[EMPTY:[a-z0-9_]+]] = tensor.empty() : tensor<16x64xf32>
// CHECK-NEXT: scf.for %{{[a-z0-9_]+}} = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} iter_args(%{{[a-z0-9_]+}} = %[[EMPTY]])
// CHECK: scf.for
// CHECK-NEXT: %[[START:[a-z0-9_]+]] = arith.constant dense<1.500000e+00> : vector<8x32xf32>
// CHECK-NEXT: arith.addf %[[START]], %{{[a-z0-9_]+}} : vector<8x32xf32>
// CHECK-NOT: vector.transfer_read
func.func @filled_rows(%x: vector<8x32xf32>) -> tensor<16x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  %row = arith.constant dense<1.5> : vector<1x64xf32>
  %empty = tensor.empty() : tensor<16x64xf32>
  %filled = scf.for %r = %c0 to %c16 step %c1 iter_args(%t = %empty) -> (tensor<16x64xf32>) {
    %w = vector.transfer_write %row, %t[%r, %c0] {in_bounds = [true, true]} : vector<1x64xf32>, tensor<16x64xf32>
    scf.yield %w : tensor<16x64xf32>
  }
  %out = scf.for %i = %c0 to %c16 step %c8 iter_args(%a = %filled) -> (tensor<16x64xf32>) {
    %in = scf.for %j = %c0 to %c64 step %c32 iter_args(%b = %a) -> (tensor<16x64xf32>) {
      %tile = vector.transfer_read %b[%i, %j], %pad {in_bounds = [true, true]} : tensor<16x64xf32>, vector<8x32xf32>
      %sum = arith.addf %tile, %x : vector<8x32xf32>
      %w = vector.transfer_write %sum, %b[%i, %j] {in_bounds = [true, true]} : vector<8x32xf32>, tensor<16x64xf32>
      scf.yield %w : tensor<16x64xf32>
    }
    scf.yield %in : tensor<16x64xf32>
  }
  return %out : tensor<16x64xf32>
}

// CHECK-LABEL: func.func @linalg_fill(
// CHECK-NOT: linalg.fill
// CHECK: arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK-NOT: vector.transfer_read
func.func @linalg_fill(%x: vector<8x32xf32>) -> tensor<8x64xf32> {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x64xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x64xf32>) -> tensor<8x64xf32>
  %out = scf.for %i = %c0 to %c8 step %c8 iter_args(%a = %filled) -> (tensor<8x64xf32>) {
    %in = scf.for %j = %c0 to %c64 step %c32 iter_args(%b = %a) -> (tensor<8x64xf32>) {
      %tile = vector.transfer_read %b[%i, %j], %zero {in_bounds = [true, true]} : tensor<8x64xf32>, vector<8x32xf32>
      %sum = arith.addf %tile, %x : vector<8x32xf32>
      %w = vector.transfer_write %sum, %b[%i, %j] {in_bounds = [true, true]} : vector<8x32xf32>, tensor<8x64xf32>
      scf.yield %w : tensor<8x64xf32>
    }
    scf.yield %in : tensor<8x64xf32>
  }
  return %out : tensor<8x64xf32>
}

// An edge program's accumulator: the valid corner of a filled tile, whose register tiles
// cover the corner; the corner starts empty, and the fill and its slice go.
// CHECK-LABEL: func.func @filled_corner(
// CHECK-NOT: linalg.fill
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[EMPTY:[a-z0-9_]+]] = tensor.empty() : tensor<8x64xf32>
// CHECK-NEXT: scf.for %{{[a-z0-9_]+}} = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} iter_args(%{{[a-z0-9_]+}} = %[[EMPTY]])
// CHECK: arith.constant dense<0.000000e+00> : vector<8x32xf32>
// CHECK-NOT: vector.transfer_read
func.func @filled_corner(%x: vector<8x32xf32>) -> tensor<8x64xf32> {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x64xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x64xf32>) -> tensor<64x64xf32>
  %corner = tensor.extract_slice %filled[0, 0] [8, 64] [1, 1] : tensor<64x64xf32> to tensor<8x64xf32>
  %out = scf.for %i = %c0 to %c8 step %c8 iter_args(%a = %corner) -> (tensor<8x64xf32>) {
    %in = scf.for %j = %c0 to %c64 step %c32 iter_args(%b = %a) -> (tensor<8x64xf32>) {
      %tile = vector.transfer_read %b[%i, %j], %zero {in_bounds = [true, true]} : tensor<8x64xf32>, vector<8x32xf32>
      %sum = arith.addf %tile, %x : vector<8x32xf32>
      %w = vector.transfer_write %sum, %b[%i, %j] {in_bounds = [true, true]} : vector<8x32xf32>, tensor<8x64xf32>
      scf.yield %w : tensor<8x64xf32>
    }
    scf.yield %in : tensor<8x64xf32>
  }
  return %out : tensor<8x64xf32>
}

// The tiles stop short of the last 32 columns: those keep the fill's zeros.
// CHECK-LABEL: func.func @partly_covered(
// CHECK: linalg.fill
// CHECK: vector.transfer_read
func.func @partly_covered(%x: vector<8x32xf32>) -> tensor<8x64xf32> {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x64xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x64xf32>) -> tensor<8x64xf32>
  %out = scf.for %i = %c0 to %c8 step %c8 iter_args(%a = %filled) -> (tensor<8x64xf32>) {
    %in = scf.for %j = %c0 to %c32 step %c32 iter_args(%b = %a) -> (tensor<8x64xf32>) {
      %tile = vector.transfer_read %b[%i, %j], %zero {in_bounds = [true, true]} : tensor<8x64xf32>, vector<8x32xf32>
      %sum = arith.addf %tile, %x : vector<8x32xf32>
      %w = vector.transfer_write %sum, %b[%i, %j] {in_bounds = [true, true]} : vector<8x32xf32>, tensor<8x64xf32>
      scf.yield %w : tensor<8x64xf32>
    }
    scf.yield %in : tensor<8x64xf32>
  }
  return %out : tensor<8x64xf32>
}

// Rows of 6 over a 16-row accumulator leave its last 4 to a tile of their own after the
// loop (a peeled register tile of rows), reading them from the loop's result: both start
// from the constant, and the fill goes.
// CHECK-LABEL: func.func @peeled_rows(
// CHECK-NOT: linalg.fill
// CHECK: %[[EMPTY:[a-z0-9_]+]] = tensor.empty() : tensor<16x64xf32>
// CHECK: scf.for %{{[a-z0-9_]+}} = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} iter_args(%{{[a-z0-9_]+}} = %[[EMPTY]])
// CHECK: arith.constant dense<0.000000e+00> : vector<6x64xf32>
// CHECK: arith.constant dense<0.000000e+00> : vector<4x64xf32>
// CHECK-NOT: vector.transfer_read
func.func @peeled_rows(%x: vector<6x64xf32>, %y: vector<4x64xf32>) -> tensor<16x64xf32> {
  %c0 = arith.constant 0 : index
  %c6 = arith.constant 6 : index
  %c12 = arith.constant 12 : index
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16x64xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x64xf32>) -> tensor<16x64xf32>
  %main = scf.for %i = %c0 to %c12 step %c6 iter_args(%a = %filled) -> (tensor<16x64xf32>) {
    %tile = vector.transfer_read %a[%i, %c0], %zero {in_bounds = [true, true]} : tensor<16x64xf32>, vector<6x64xf32>
    %sum = arith.addf %tile, %x : vector<6x64xf32>
    %w = vector.transfer_write %sum, %a[%i, %c0] {in_bounds = [true, true]} : vector<6x64xf32>, tensor<16x64xf32>
    scf.yield %w : tensor<16x64xf32>
  }
  %last = vector.transfer_read %main[%c12, %c0], %zero {in_bounds = [true, true]} : tensor<16x64xf32>, vector<4x64xf32>
  %sum = arith.addf %last, %y : vector<4x64xf32>
  %out = vector.transfer_write %sum, %main[%c12, %c0] {in_bounds = [true, true]} : vector<4x64xf32>, tensor<16x64xf32>
  return %out : tensor<16x64xf32>
}

// An edge program's 8 rows: one tile of 6 (its loop folded away) and one of 2.
// CHECK-LABEL: func.func @peeled_rows_unlooped(
// CHECK-NOT: linalg.fill
// CHECK: arith.constant dense<0.000000e+00> : vector<6x64xf32>
// CHECK: arith.constant dense<0.000000e+00> : vector<2x64xf32>
// CHECK-NOT: vector.transfer_read
func.func @peeled_rows_unlooped(%x: vector<6x64xf32>, %y: vector<2x64xf32>) -> tensor<8x64xf32> {
  %c0 = arith.constant 0 : index
  %c6 = arith.constant 6 : index
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x64xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x64xf32>) -> tensor<8x64xf32>
  %tile = vector.transfer_read %filled[%c0, %c0], %zero {in_bounds = [true, true]} : tensor<8x64xf32>, vector<6x64xf32>
  %sum = arith.addf %tile, %x : vector<6x64xf32>
  %first = vector.transfer_write %sum, %filled[%c0, %c0] {in_bounds = [true, true]} : vector<6x64xf32>, tensor<8x64xf32>
  %last = vector.transfer_read %first[%c6, %c0], %zero {in_bounds = [true, true]} : tensor<8x64xf32>, vector<2x64xf32>
  %sum2 = arith.addf %last, %y : vector<2x64xf32>
  %out = vector.transfer_write %sum2, %first[%c6, %c0] {in_bounds = [true, true]} : vector<2x64xf32>, tensor<8x64xf32>
  return %out : tensor<8x64xf32>
}

// The tile after the loop stops 2 rows short of the end: those keep the fill's zeros.
// CHECK-LABEL: func.func @peeled_rows_short(
// CHECK: linalg.fill
// CHECK: vector.transfer_read
// CHECK: vector.transfer_read
func.func @peeled_rows_short(%x: vector<6x64xf32>, %y: vector<2x64xf32>) -> tensor<16x64xf32> {
  %c0 = arith.constant 0 : index
  %c6 = arith.constant 6 : index
  %c12 = arith.constant 12 : index
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16x64xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x64xf32>) -> tensor<16x64xf32>
  %main = scf.for %i = %c0 to %c12 step %c6 iter_args(%a = %filled) -> (tensor<16x64xf32>) {
    %tile = vector.transfer_read %a[%i, %c0], %zero {in_bounds = [true, true]} : tensor<16x64xf32>, vector<6x64xf32>
    %sum = arith.addf %tile, %x : vector<6x64xf32>
    %w = vector.transfer_write %sum, %a[%i, %c0] {in_bounds = [true, true]} : vector<6x64xf32>, tensor<16x64xf32>
    scf.yield %w : tensor<16x64xf32>
  }
  %last = vector.transfer_read %main[%c12, %c0], %zero {in_bounds = [true, true]} : tensor<16x64xf32>, vector<2x64xf32>
  %sum = arith.addf %last, %y : vector<2x64xf32>
  %out = vector.transfer_write %sum, %main[%c12, %c0] {in_bounds = [true, true]} : vector<2x64xf32>, tensor<16x64xf32>
  return %out : tensor<16x64xf32>
}

// A tile carried through two writes (what the loop yields is not one write of the read
// tile into the carried tensor): left alone.
// CHECK-LABEL: func.func @written_twice(
// CHECK: linalg.fill
// CHECK: vector.transfer_read
func.func @written_twice(%x: vector<8x32xf32>) -> tensor<8x32xf32> {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<8x32xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x32xf32>) -> tensor<8x32xf32>
  %out = scf.for %i = %c0 to %c8 step %c8 iter_args(%a = %filled) -> (tensor<8x32xf32>) {
    %in = scf.for %j = %c0 to %c32 step %c32 iter_args(%b = %a) -> (tensor<8x32xf32>) {
      %w = vector.transfer_write %x, %b[%i, %j] {in_bounds = [true, true]} : vector<8x32xf32>, tensor<8x32xf32>
      %tile = vector.transfer_read %b[%i, %j], %zero {in_bounds = [true, true]} : tensor<8x32xf32>, vector<8x32xf32>
      %again = vector.transfer_write %tile, %w[%i, %j] {in_bounds = [true, true]} : vector<8x32xf32>, tensor<8x32xf32>
      scf.yield %again : tensor<8x32xf32>
    }
    scf.yield %in : tensor<8x32xf32>
  }
  return %out : tensor<8x32xf32>
}

// A bmm's unit batch dim and a tile as wide as the accumulator: both spanned from index 0
// (only the rows are looped), the fill's rows written as vector<1x1x16> at [0, r, 0].
// CHECK-LABEL: func.func @unit_batch(
// CHECK-NOT: vector<1x1x16xf32>, tensor<1x16x16xf32>
// CHECK: arith.constant dense<0.000000e+00> : vector<1x8x16xf32>
// CHECK-NOT: vector.transfer_read
func.func @unit_batch(%x: vector<1x8x16xf32>) -> tensor<1x16x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  %row = arith.constant dense<0.0> : vector<1x1x16xf32>
  %empty = tensor.empty() : tensor<1x16x16xf32>
  %filled = scf.for %r = %c0 to %c16 step %c1 iter_args(%t = %empty) -> (tensor<1x16x16xf32>) {
    %w = vector.transfer_write %row, %t[%c0, %r, %c0] {in_bounds = [true, true, true]} : vector<1x1x16xf32>, tensor<1x16x16xf32>
    scf.yield %w : tensor<1x16x16xf32>
  }
  %out = scf.for %i = %c0 to %c16 step %c8 iter_args(%a = %filled) -> (tensor<1x16x16xf32>) {
    %tile = vector.transfer_read %a[%c0, %i, %c0], %pad {in_bounds = [true, true, true]} : tensor<1x16x16xf32>, vector<1x8x16xf32>
    %sum = arith.addf %tile, %x : vector<1x8x16xf32>
    %w = vector.transfer_write %sum, %a[%c0, %i, %c0] {in_bounds = [true, true, true]} : vector<1x8x16xf32>, tensor<1x16x16xf32>
    scf.yield %w : tensor<1x16x16xf32>
  }
  return %out : tensor<1x16x16xf32>
}

// One loop's variable indexing two dims (the tiles on the diagonal only): left alone.
// CHECK-LABEL: func.func @diagonal(
// CHECK: linalg.fill
// CHECK: vector.transfer_read
func.func @diagonal(%x: vector<8x8xf32>) -> tensor<16x16xf32> {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<16x16xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x16xf32>) -> tensor<16x16xf32>
  %out = scf.for %i = %c0 to %c16 step %c8 iter_args(%a = %filled) -> (tensor<16x16xf32>) {
    %tile = vector.transfer_read %a[%i, %i], %zero {in_bounds = [true, true]} : tensor<16x16xf32>, vector<8x8xf32>
    %sum = arith.addf %tile, %x : vector<8x8xf32>
    %w = vector.transfer_write %sum, %a[%i, %i] {in_bounds = [true, true]} : vector<8x8xf32>, tensor<16x16xf32>
    scf.yield %w : tensor<16x16xf32>
  }
  return %out : tensor<16x16xf32>
}
