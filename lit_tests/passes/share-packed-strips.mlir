// Programs with a buffer of their own (a running accumulator) that each copy the same B
// block per K step (independent of the program) run in groups of 2 (16 programs, 8 groups
// left): the group copies every step's block once into one strip, then runs its programs in
// turn, each reading step k's block from the strip, its accumulator allocated once per group.
// A grid whose only buffer is the copy is left to grid grouping, and a copy that depends on
// the program stays the program's own.
// RUN: helion-opt %s --helion-share-packed-strips | FileCheck %s

// CHECK-LABEL: func.func @running_sum(
// CHECK-SAME: %[[B:[a-z0-9_]+]]: memref<64x64xf32>, %[[X:[a-z0-9_]+]]: memref<64x64xf32>
// CHECK: scf.forall (%[[GROUP:[a-z0-9_]+]]) in (8) {
// CHECK-NEXT: %[[STRIP:[a-z0-9_]+]] = memref.alloc() {alignment = 64 : i64} : memref<8x8x16xf32>
// CHECK: scf.for %[[T:[a-z0-9_]+]] =
// CHECK: %[[K:[a-z0-9_]+]] = arith.addi %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : index
// CHECK-NEXT: %[[SLOT:[a-z0-9_]+]] = memref.subview %[[STRIP]][%[[T]], 0, 0] [1, 8, 16] [1, 1, 1] : memref<8x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
// CHECK-NEXT: scf.for %[[KK:[a-z0-9_]+]] =
// CHECK-NEXT: %[[KR:[a-z0-9_]+]] = arith.addi %[[K]], %[[KK]] : index
// CHECK-NEXT: %[[V:[a-z0-9_]+]] = vector.transfer_read %[[B]][%[[KR]], %{{[a-z0-9_]+}}]
// CHECK-NEXT: vector.transfer_write %[[V]], %[[SLOT]][%[[KK]],
// CHECK: %[[ACC:[a-z0-9_]+]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: scf.for %[[J:[a-z0-9_]+]] =
// CHECK-NEXT: %[[FIRST:[a-z0-9_]+]] = arith.muli %[[GROUP]], %{{[a-z0-9_]+}} : index
// CHECK-NEXT: %[[PROGRAM:[a-z0-9_]+]] = arith.addi %[[FIRST]], %[[J]] : index
// CHECK-NEXT: arith.muli %[[PROGRAM]],
// CHECK: scf.for %[[STEP_K:[a-z0-9_]+]] =
// CHECK-NEXT: %[[FROM:[a-z0-9_]+]] = arith.subi %[[STEP_K]], %{{[a-z0-9_]+}} : index
// CHECK-NEXT: %[[STEP:[a-z0-9_]+]] = arith.divui %[[FROM]], %{{[a-z0-9_]+}} : index
// CHECK-NEXT: %[[BLOCK:[a-z0-9_]+]] = memref.subview %[[STRIP]][%[[STEP]], 0, 0]
// CHECK-NOT: vector.transfer_read %[[B]]
// CHECK: vector.transfer_read %[[BLOCK]]
// CHECK: return
func.func @running_sum(%b: memref<64x64xf32>, %x: memref<64x64xf32>, %out: memref<64x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : vector<16xf32>
  scf.forall (%m) in (16) {
    %row = arith.muli %m, %c4 : index
    %acc = memref.alloc() : memref<16xf32>
    vector.transfer_write %zeros, %acc[%c0] {in_bounds = [true]} : vector<16xf32>, memref<16xf32>
    %buf = memref.alloc() {alignment = 64 : i64} : memref<8x16xf32>
    scf.for %k = %c0 to %c64 step %c8 {
      scf.for %kk = %c0 to %c8 step %c1 {
        %kr = arith.addi %k, %kk : index
        %v = vector.transfer_read %b[%kr, %c0], %zero {in_bounds = [true]} : memref<64x64xf32>, vector<16xf32>
        vector.transfer_write %v, %buf[%kk, %c0] {in_bounds = [true]} : vector<16xf32>, memref<8x16xf32>
      }
      scf.for %kk = %c0 to %c8 step %c1 {
        %kr = arith.addi %k, %kk : index
        %a = vector.transfer_read %acc[%c0], %zero {in_bounds = [true]} : memref<16xf32>, vector<16xf32>
        %y = vector.transfer_read %buf[%kk, %c0], %zero {in_bounds = [true]} : memref<8x16xf32>, vector<16xf32>
        %s = memref.load %x[%row, %kr] : memref<64x64xf32>
        %sb = vector.broadcast %s : f32 to vector<16xf32>
        %f = vector.fma %sb, %y, %a : vector<16xf32>
        vector.transfer_write %f, %acc[%c0] {in_bounds = [true]} : vector<16xf32>, memref<16xf32>
      }
    }
    %r = vector.transfer_read %acc[%c0], %zero {in_bounds = [true]} : memref<16xf32>, vector<16xf32>
    vector.transfer_write %r, %out[%m, %c0] {in_bounds = [true]} : vector<16xf32>, memref<64x16xf32>
  }
  return
}

// CHECK-LABEL: func.func @only_the_copy(
// CHECK: scf.forall (%{{[a-z0-9_]+}}) in (16)
func.func @only_the_copy(%b: memref<64x64xf32>, %out: memref<64x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%m) in (16) {
    %buf = memref.alloc() : memref<8x16xf32>
    scf.for %k = %c0 to %c64 step %c8 {
      scf.for %kk = %c0 to %c8 step %c1 {
        %kr = arith.addi %k, %kk : index
        %v = vector.transfer_read %b[%kr, %c0], %zero {in_bounds = [true]} : memref<64x64xf32>, vector<16xf32>
        vector.transfer_write %v, %buf[%kk, %c0] {in_bounds = [true]} : vector<16xf32>, memref<8x16xf32>
      }
      %y = vector.transfer_read %buf[%c0, %c0], %zero {in_bounds = [true]} : memref<8x16xf32>, vector<16xf32>
      vector.transfer_write %y, %out[%m, %c0] {in_bounds = [true]} : vector<16xf32>, memref<64x16xf32>
    }
  }
  return
}

// CHECK-LABEL: func.func @copy_of_the_program(
// CHECK: scf.forall (%{{[a-z0-9_]+}}) in (16)
func.func @copy_of_the_program(%b: memref<64x64xf32>, %out: memref<64x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%m) in (16) {
    %row = arith.muli %m, %c4 : index
    %acc = memref.alloc() : memref<16xf32>
    %buf = memref.alloc() : memref<8x16xf32>
    scf.for %k = %c0 to %c64 step %c8 {
      scf.for %kk = %c0 to %c8 step %c1 {
        %kr = arith.addi %row, %kk : index
        %v = vector.transfer_read %b[%kr, %c0], %zero {in_bounds = [true]} : memref<64x64xf32>, vector<16xf32>
        vector.transfer_write %v, %buf[%kk, %c0] {in_bounds = [true]} : vector<16xf32>, memref<8x16xf32>
      }
      %y = vector.transfer_read %buf[%c0, %c0], %zero {in_bounds = [true]} : memref<8x16xf32>, vector<16xf32>
      vector.transfer_write %y, %acc[%c0] {in_bounds = [true]} : vector<16xf32>, memref<16xf32>
    }
    %r = vector.transfer_read %acc[%c0], %zero {in_bounds = [true]} : memref<16xf32>, vector<16xf32>
    vector.transfer_write %r, %out[%m, %c0] {in_bounds = [true]} : vector<16xf32>, memref<64x16xf32>
  }
  return
}

// A copy of index elements (no fixed width, no size to bound the strip) stays the program's.
// CHECK-LABEL: func.func @copy_of_indices(
// CHECK: scf.forall (%{{[a-z0-9_]+}}) in (16)
func.func @copy_of_indices(%b: memref<64x16xindex>, %out: memref<64x16xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  scf.forall (%m) in (16) {
    %acc = memref.alloc() : memref<16xindex>
    %buf = memref.alloc() : memref<8x16xindex>
    scf.for %k = %c0 to %c64 step %c8 {
      scf.for %kk = %c0 to %c8 step %c1 {
        %kr = arith.addi %k, %kk : index
        %v = vector.transfer_read %b[%kr, %c0], %c0 {in_bounds = [true]} : memref<64x16xindex>, vector<16xindex>
        vector.transfer_write %v, %buf[%kk, %c0] {in_bounds = [true]} : vector<16xindex>, memref<8x16xindex>
      }
      %y = vector.transfer_read %buf[%c0, %c0], %c0 {in_bounds = [true]} : memref<8x16xindex>, vector<16xindex>
      vector.transfer_write %y, %acc[%c0] {in_bounds = [true]} : vector<16xindex>, memref<16xindex>
    }
    %r = vector.transfer_read %acc[%c0], %c0 {in_bounds = [true]} : memref<16xindex>, vector<16xindex>
    vector.transfer_write %r, %out[%m, %c0] {in_bounds = [true]} : vector<16xindex>, memref<64x16xindex>
  }
  return
}
