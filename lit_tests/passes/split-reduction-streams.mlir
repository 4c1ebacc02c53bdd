// A long row reduction's loop reads both halves of the row at once: half the steps, each
// the first half's lanes then the second half's, where only full reductions see the lanes.
// RUN: helion-opt %s --helion-split-reduction-streams | FileCheck %s

// CHECK-LABEL: func.func @row_sum(
// CHECK-DAG: %[[HALF:.*]] = arith.constant 2048 : index
// CHECK-DAG: %[[STEP:.*]] = arith.constant 32 : index
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %[[HALF]] step %[[STEP]] iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<64xf32>)
// CHECK: %[[FIRST:.*]] = vector.transfer_read %{{.*}}[%{{.*}}, %[[K]]], %{{.*}} {in_bounds = [true]} : tensor<8x4096xf32>, vector<32xf32>
// CHECK: %[[AT:.*]] = arith.addi %[[K]], %{{.*}} : index
// CHECK: %[[SECOND:.*]] = vector.transfer_read %{{.*}}[%{{.*}}, %[[AT]]], %{{.*}} {in_bounds = [true]} : tensor<8x4096xf32>, vector<32xf32>
// CHECK: %[[BOTH:.*]] = vector.shuffle %[[FIRST]], %[[SECOND]] [0, 1, {{.*}}, 62, 63] : vector<32xf32>, vector<32xf32>
// CHECK: arith.addf %[[BOTH]], %[[ACC]] : vector<64xf32>
// CHECK: vector.multi_reduction <add>, %{{.*}}, %{{.*}} [0] : vector<64xf32> to f32
func.func @row_sum(%x: tensor<8x4096xf32>, %row: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n = arith.constant 4096 : index
  %pad = ub.poison : f32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  %init = arith.constant 0.0 : f32
  %acc = scf.for %k = %c0 to %n step %c64 iter_args(%a = %zero) -> (vector<64xf32>) {
    %v = vector.transfer_read %x[%row, %k], %pad {in_bounds = [true]} : tensor<8x4096xf32>, vector<64xf32>
    %s = arith.addf %v, %a : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  %r = vector.multi_reduction <add>, %acc, %init [0] : vector<64xf32> to f32
  return %r : f32
}

// Two rows read lane by lane (a weighted sum of squares in bf16), a scale the same in every
// lane, and a second accumulator (the max): each read split, both results reduced.
// CHECK-LABEL: func.func @weighted_squares_and_max(
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<64xf32>, vector<64xf32>)
// CHECK-COUNT-2: vector.shuffle
// CHECK-NOT: vector.transfer_read {{.*}} vector<64xbf16>
// CHECK: scf.yield
func.func @weighted_squares_and_max(%x: tensor<4x8192xbf16>, %w: tensor<8192xbf16>, %row: index, %scale: f32) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n = arith.constant 8192 : index
  %pad = arith.constant 0.0 : bf16
  %zero = arith.constant dense<0.0> : vector<64xf32>
  %low = arith.constant dense<0xFF800000> : vector<64xf32>
  %init = arith.constant 0.0 : f32
  %r:2 = scf.for %k = %c0 to %n step %c64 iter_args(%a = %zero, %m = %low) -> (vector<64xf32>, vector<64xf32>) {
    %v = vector.transfer_read %x[%row, %k], %pad {in_bounds = [true]} : tensor<4x8192xbf16>, vector<64xbf16>
    %u = vector.transfer_read %w[%k], %pad {in_bounds = [true]} : tensor<8192xbf16>, vector<64xbf16>
    %vf = arith.extf %v : vector<64xbf16> to vector<64xf32>
    %uf = arith.extf %u : vector<64xbf16> to vector<64xf32>
    %sc = vector.broadcast %scale : f32 to vector<64xf32>
    %sq = arith.mulf %vf, %vf : vector<64xf32>
    %t = arith.mulf %sq, %uf : vector<64xf32>
    %ts = arith.mulf %t, %sc : vector<64xf32>
    %s = arith.addf %ts, %a : vector<64xf32>
    %mx = arith.maximumf %vf, %m : vector<64xf32>
    scf.yield %s, %mx : vector<64xf32>, vector<64xf32>
  }
  %sum = vector.multi_reduction <add>, %r#0, %init [0] : vector<64xf32> to f32
  %max = vector.multi_reduction <maximumf>, %r#1, %init [0] : vector<64xf32> to f32
  return %sum, %max : f32, f32
}

// What stays: a row whose halves are shorter than a 4 KB page; a row copied into a buffer
// of the program's (read from the caches); the loop variable used
// other than as a read's innermost index; a result used lane by lane; lanes that differ
// in the init or in a constant; a read of a column, a masked step, a write.
// CHECK-LABEL: func.func @short_row(
// CHECK-NOT: vector.shuffle
// CHECK: return
func.func @short_row(%x: tensor<8x1024xf32>, %row: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n = arith.constant 1024 : index
  %pad = ub.poison : f32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  %init = arith.constant 0.0 : f32
  %acc = scf.for %k = %c0 to %n step %c64 iter_args(%a = %zero) -> (vector<64xf32>) {
    %v = vector.transfer_read %x[%row, %k], %pad {in_bounds = [true]} : tensor<8x1024xf32>, vector<64xf32>
    %s = arith.addf %v, %a : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  %r = vector.multi_reduction <add>, %acc, %init [0] : vector<64xf32> to f32
  return %r : f32
}

// CHECK-LABEL: func.func @index_used(
// CHECK-NOT: vector.shuffle
// CHECK: return
func.func @index_used(%x: tensor<8x4096xf32>, %row: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n = arith.constant 4096 : index
  %pad = ub.poison : f32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  %init = arith.constant 0.0 : f32
  %acc = scf.for %k = %c0 to %n step %c64 iter_args(%a = %zero) -> (vector<64xf32>) {
    %v = vector.transfer_read %x[%row, %k], %pad {in_bounds = [true]} : tensor<8x4096xf32>, vector<64xf32>
    %i = arith.index_cast %k : index to i32
    %f = arith.sitofp %i : i32 to f32
    %b = vector.broadcast %f : f32 to vector<64xf32>
    %p = arith.mulf %v, %b : vector<64xf32>
    %s = arith.addf %p, %a : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  %r = vector.multi_reduction <add>, %acc, %init [0] : vector<64xf32> to f32
  return %r : f32
}

// CHECK-LABEL: func.func @lanes_seen(
// CHECK-NOT: vector.shuffle
// CHECK: return
func.func @lanes_seen(%x: tensor<8x4096xf32>, %row: index) -> vector<64xf32> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n = arith.constant 4096 : index
  %pad = ub.poison : f32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  %acc = scf.for %k = %c0 to %n step %c64 iter_args(%a = %zero) -> (vector<64xf32>) {
    %v = vector.transfer_read %x[%row, %k], %pad {in_bounds = [true]} : tensor<8x4096xf32>, vector<64xf32>
    %s = arith.addf %v, %a : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  return %acc : vector<64xf32>
}

// CHECK-LABEL: func.func @lanes_differ(
// CHECK-NOT: vector.shuffle
// CHECK: return
func.func @lanes_differ(%x: tensor<8x4096xf32>, %row: index, %start: vector<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n = arith.constant 4096 : index
  %pad = ub.poison : f32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  %init = arith.constant 0.0 : f32
  %acc = scf.for %k = %c0 to %n step %c64 iter_args(%a = %start) -> (vector<64xf32>) {
    %v = vector.transfer_read %x[%row, %k], %pad {in_bounds = [true]} : tensor<8x4096xf32>, vector<64xf32>
    %s = arith.addf %v, %a : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  %acc2 = scf.for %k = %c0 to %n step %c64 iter_args(%a = %zero) -> (vector<64xf32>) {
    %v = vector.transfer_read %x[%row, %k], %pad {in_bounds = [true]} : tensor<8x4096xf32>, vector<64xf32>
    %lane = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0]> : vector<64xf32>
    %p = arith.mulf %v, %lane : vector<64xf32>
    %s = arith.addf %p, %a : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  %r = vector.multi_reduction <add>, %acc, %init [0] : vector<64xf32> to f32
  %r2 = vector.multi_reduction <add>, %acc2, %r [0] : vector<64xf32> to f32
  return %r2 : f32
}

// CHECK-LABEL: func.func @column_masked_or_written(
// CHECK-NOT: vector.shuffle
// CHECK: return
func.func @column_masked_or_written(%x: tensor<4096x4096xf32>, %out: tensor<4096xf32>, %row: index, %mask: vector<64xi1>) -> (f32, tensor<4096xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n = arith.constant 4096 : index
  %pad = ub.poison : f32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  %init = arith.constant 0.0 : f32
  %column = scf.for %k = %c0 to %n step %c64 iter_args(%a = %zero) -> (vector<64xf32>) {
    %v = vector.transfer_read %x[%k, %row], %pad {in_bounds = [true], permutation_map = affine_map<(d0, d1) -> (d0)>} : tensor<4096x4096xf32>, vector<64xf32>
    %s = arith.addf %v, %a : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  %masked = scf.for %k = %c0 to %n step %c64 iter_args(%a = %zero) -> (vector<64xf32>) {
    %v = vector.transfer_read %x[%row, %k], %pad, %mask {in_bounds = [true]} : tensor<4096x4096xf32>, vector<64xf32>
    %s = arith.addf %v, %a : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  %written:2 = scf.for %k = %c0 to %n step %c64 iter_args(%a = %zero, %o = %out) -> (vector<64xf32>, tensor<4096xf32>) {
    %v = vector.transfer_read %x[%row, %k], %pad {in_bounds = [true]} : tensor<4096x4096xf32>, vector<64xf32>
    %s = arith.addf %v, %a : vector<64xf32>
    %w = vector.transfer_write %s, %o[%k] {in_bounds = [true]} : vector<64xf32>, tensor<4096xf32>
    scf.yield %s, %w : vector<64xf32>, tensor<4096xf32>
  }
  %r0 = vector.multi_reduction <add>, %column, %init [0] : vector<64xf32> to f32
  %r1 = vector.multi_reduction <add>, %masked, %r0 [0] : vector<64xf32> to f32
  %r2 = vector.multi_reduction <add>, %written#0, %r1 [0] : vector<64xf32> to f32
  return %r2, %written#1 : f32, tensor<4096xf32>
}

// CHECK-LABEL: func.func @copied_row(
// CHECK-NOT: vector.shuffle
// CHECK: return
func.func @copied_row(%x: tensor<8x4100xf32>, %row: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n = arith.constant 4096 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  %init = arith.constant 0.0 : f32
  %valid = arith.constant 4 : index
  %mask = vector.create_mask %valid : vector<4096xi1>
  %tail = vector.transfer_read %x[%row, %n], %pad, %mask {in_bounds = [true]} : tensor<8x4100xf32>, vector<4096xf32>
  %empty = tensor.empty() : tensor<4096xf32>
  %copy = vector.transfer_write %tail, %empty[%c0] {in_bounds = [true]} : vector<4096xf32>, tensor<4096xf32>
  %acc = scf.for %k = %c0 to %n step %c64 iter_args(%a = %zero) -> (vector<64xf32>) {
    %v = vector.transfer_read %copy[%k], %pad {in_bounds = [true]} : tensor<4096xf32>, vector<64xf32>
    %s = arith.addf %v, %a : vector<64xf32>
    scf.yield %s : vector<64xf32>
  }
  %r = vector.multi_reduction <add>, %acc, %init [0] : vector<64xf32> to f32
  return %r : f32
}
