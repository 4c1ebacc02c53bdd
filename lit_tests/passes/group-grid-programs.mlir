// The 64 programs of a 1-D grid whose body is set-up then one loop run in 8 groups of 8:
// each group runs its programs' set-up (program = group * 8 + j), then the loop once,
// doing every program's iteration r before r + 1, with the set-up's pure ops recomputed
// per program inside it; what does not depend on the program (the row of a 2-D tile) stays
// outside the loops over programs. A 2-D grid is grouped along its last dimension (4x64
// programs: groups of 32, 8 groups left). A grid whose loop yields results, or whose loop
// moves an access's innermost index (programs that read contiguous runs already), is left
// alone. Programs that copy the same B block into a buffer (a matmul's packed operand) are
// grouped along a dimension the copy does not depend on, the copy run once per group step;
// a copy that depends on every program index, or a buffer that a program writes again,
// keeps the grid as it was; work after the loop (a matmul's peeled last rows) runs per
// program in a loop of its own. A loop over row tiles whose body reads the accumulator, adds the
// tile's rows 8 at a time in a loop carrying it and writes it back becomes one loop over
// the 8-row steps (tile = step / 4, row = step % 4 * 8) before grouping, each step reading
// and writing the accumulator; not where the inner loop also touches the accumulator's buffer.
// RUN: helion-opt %s --helion-group-grid-programs | FileCheck %s

// CHECK-LABEL: func.func @col_sum(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<16x2048xf32>, %[[OUT:[a-z0-9_]+]]: memref<2048xf32>
// CHECK: %[[C32:[a-z0-9_]+]] = arith.constant 32 : index
// CHECK: scf.forall (%[[GROUP:[a-z0-9_]+]]) in (8) {
// CHECK: %[[SIZE:[a-z0-9_]+]] = arith.constant 8 : index
// CHECK-NEXT: scf.for %[[J:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %[[SIZE]] step
// CHECK-NEXT: %[[FIRST:[a-z0-9_]+]] = arith.muli %[[GROUP]], %[[SIZE]] : index
// CHECK-NEXT: %[[PROGRAM:[a-z0-9_]+]] = arith.addi %[[FIRST]], %[[J]] : index
// CHECK-NEXT: %[[COL:[a-z0-9_]+]] = arith.muli %[[PROGRAM]], %[[C32]] : index
// CHECK-NEXT: %[[ACC:[a-z0-9_]+]] = memref.subview %[[OUT]][%[[COL]]] [32] [1]
// CHECK-NEXT: linalg.fill ins(%{{[a-z0-9_]+}} : f32) outs(%[[ACC]] :
// CHECK-NEXT: }
// CHECK-NEXT: scf.for %[[R:[a-z0-9_]+]] =
// CHECK: %[[SIZE2:[a-z0-9_]+]] = arith.constant 8 : index
// CHECK-NEXT: scf.for %[[J2:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %[[SIZE2]] step
// CHECK-NEXT: %[[FIRST2:[a-z0-9_]+]] = arith.muli %[[GROUP]], %[[SIZE2]] : index
// CHECK-NEXT: %[[PROGRAM2:[a-z0-9_]+]] = arith.addi %[[FIRST2]], %[[J2]] : index
// CHECK-NEXT: %[[COL2:[a-z0-9_]+]] = arith.muli %[[PROGRAM2]], %[[C32]] : index
// CHECK-NEXT: %[[ACC2:[a-z0-9_]+]] = memref.subview %[[OUT]][%[[COL2]]] [32] [1]
// CHECK-NEXT: %[[ROW:[a-z0-9_]+]] = memref.subview %[[X]][%[[R]], %[[COL2]]] [1, 32] [1, 1]
// CHECK-NEXT: linalg.add ins(%[[ROW]], %[[ACC2]] : {{.*}}) outs(%[[ACC2]] :
func.func @col_sum(%x: memref<16x2048xf32>, %out: memref<2048xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (64) {
    %col = arith.muli %i, %c32 : index
    %acc = memref.subview %out[%col] [32] [1] : memref<2048xf32> to memref<32xf32, strided<[1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%acc : memref<32xf32, strided<[1], offset: ?>>)
    scf.for %r = %c0 to %c16 step %c1 {
      %row = memref.subview %x[%r, %col] [1, 32] [1, 1] : memref<16x2048xf32> to memref<32xf32, strided<[1], offset: ?>>
      linalg.add ins(%row, %acc : memref<32xf32, strided<[1], offset: ?>>, memref<32xf32, strided<[1], offset: ?>>) outs(%acc : memref<32xf32, strided<[1], offset: ?>>)
    }
  }
  return
}

// CHECK-LABEL: func.func @loop_with_results(
// CHECK: scf.forall (%{{[a-z0-9_]+}}) in (64)
func.func @loop_with_results(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.forall (%i) in (64) {
    %s = scf.for %r = %c0 to %n step %c1 iter_args(%a = %i) -> (index) {
      scf.yield %a : index
    }
  }
  return
}

// CHECK-LABEL: func.func @add_tiles(
// CHECK: scf.forall (%[[I:[a-z0-9_]+]], %[[GROUP:[a-z0-9_]+]]) in (4, 2) {
// CHECK-NEXT: %[[ROW0:[a-z0-9_]+]] = arith.muli %[[I]], %{{[a-z0-9_]+}} : index
// CHECK: %[[SIZE:[a-z0-9_]+]] = arith.constant 32 : index
// CHECK: %[[FIRST:[a-z0-9_]+]] = arith.muli %[[GROUP]], %[[SIZE]] : index
// CHECK-NEXT: %[[PROGRAM:[a-z0-9_]+]] = arith.addi %[[FIRST]], %{{[a-z0-9_]+}} : index
// CHECK: scf.for %[[R:[a-z0-9_]+]] =
// CHECK-NEXT: %[[ROW:[a-z0-9_]+]] = arith.addi %[[ROW0]], %[[R]] : index
// CHECK: scf.for
// CHECK: vector.transfer_read %{{[a-z0-9_]+}}[%[[ROW]], 
func.func @add_tiles(%x: memref<64x2048xf32>, %out: memref<64x2048xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %pad = ub.poison : f32
  scf.forall (%i, %j) in (4, 64) {
    %row0 = arith.muli %i, %c16 : index
    %col = arith.muli %j, %c32 : index
    scf.for %r = %c0 to %c16 step %c1 {
      %row = arith.addi %row0, %r : index
      %v = vector.transfer_read %x[%row, %col], %pad {in_bounds = [true]} : memref<64x2048xf32>, vector<32xf32>
      vector.transfer_write %v, %out[%row, %col] {in_bounds = [true]} : vector<32xf32>, memref<64x2048xf32>
    }
  }
  return
}

// CHECK-LABEL: func.func @row_per_program(
// CHECK: scf.forall (%{{[a-z0-9_]+}}) in (64)
func.func @row_per_program(%x: memref<64x2048xf32>, %out: memref<64x2048xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c2048 = arith.constant 2048 : index
  %pad = ub.poison : f32
  scf.forall (%i) in (64) {
    scf.for %c = %c0 to %c2048 step %c64 {
      %v = vector.transfer_read %x[%i, %c], %pad {in_bounds = [true]} : memref<64x2048xf32>, vector<64xf32>
      vector.transfer_write %v, %out[%i, %c] {in_bounds = [true]} : vector<64xf32>, memref<64x2048xf32>
    }
  }
  return
}

// CHECK-LABEL: func.func @shared_pack(
// CHECK-SAME: %[[A:[a-z0-9_]+]]: memref<64x64xf32>, %[[B:[a-z0-9_]+]]: memref<64x64xf32>
// CHECK: scf.forall (%[[M:[a-z0-9_]+]], %[[N:[a-z0-9_]+]]) in (2, 4) {
// CHECK-NEXT: %[[COL:[a-z0-9_]+]] = arith.muli %[[N]], %{{[a-z0-9_]+}} : index
// CHECK-NEXT: %[[BUF:[a-z0-9_]+]] = memref.alloc() : memref<8x16xf32>
// CHECK: scf.for
// CHECK: vector.transfer_write %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}[
// CHECK: scf.for %[[K:[a-z0-9_]+]] =
// CHECK-NEXT: scf.for %[[KK:[a-z0-9_]+]] =
// CHECK-NEXT: %[[KR:[a-z0-9_]+]] = arith.addi %[[K]], %[[KK]] : index
// CHECK-NEXT: %[[V:[a-z0-9_]+]] = vector.transfer_read %[[B]][%[[KR]], %[[COL]]]
// CHECK-NEXT: vector.transfer_write %[[V]], %[[BUF]][%[[KK]],
// CHECK-NEXT: }
// CHECK: scf.for %[[J:[a-z0-9_]+]] =
// CHECK-NEXT: %[[FIRST:[a-z0-9_]+]] = arith.muli %[[M]],
// CHECK-NEXT: %[[PROGRAM:[a-z0-9_]+]] = arith.addi %[[FIRST]], %[[J]] : index
// CHECK-NEXT: arith.muli %[[PROGRAM]],
// CHECK: memref.load %[[A]]
// CHECK: vector.transfer_read %[[BUF]]
func.func @shared_pack(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : vector<16xf32>
  scf.forall (%i, %j) in (4, 4) {
    %row = arith.muli %i, %c16 : index
    %col = arith.muli %j, %c16 : index
    %tile = memref.subview %c[%row, %col] [16, 16] [1, 1] : memref<64x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
    scf.for %r = %c0 to %c16 step %c1 {
      vector.transfer_write %zeros, %tile[%r, %c0] {in_bounds = [true]} : vector<16xf32>, memref<16x16xf32, strided<[64, 1], offset: ?>>
    }
    %buf = memref.alloc() : memref<8x16xf32>
    scf.for %k = %c0 to %c64 step %c8 {
      scf.for %kk = %c0 to %c8 step %c1 {
        %kr = arith.addi %k, %kk : index
        %v = vector.transfer_read %b[%kr, %col], %zero {in_bounds = [true]} : memref<64x64xf32>, vector<16xf32>
        vector.transfer_write %v, %buf[%kk, %c0] {in_bounds = [true]} : vector<16xf32>, memref<8x16xf32>
      }
      scf.for %r = %c0 to %c16 step %c1 {
        %acc = vector.transfer_read %tile[%r, %c0], %zero {in_bounds = [true]} : memref<16x16xf32, strided<[64, 1], offset: ?>>, vector<16xf32>
        %sum = scf.for %kk = %c0 to %c8 step %c1 iter_args(%s = %acc) -> (vector<16xf32>) {
          %ar = arith.addi %row, %r : index
          %kr = arith.addi %k, %kk : index
          %x = memref.load %a[%ar, %kr] : memref<64x64xf32>
          %xb = vector.broadcast %x : f32 to vector<16xf32>
          %y = vector.transfer_read %buf[%kk, %c0], %zero {in_bounds = [true]} : memref<8x16xf32>, vector<16xf32>
          %f = vector.fma %xb, %y, %s : vector<16xf32>
          scf.yield %f : vector<16xf32>
        }
        vector.transfer_write %sum, %tile[%r, %c0] {in_bounds = [true]} : vector<16xf32>, memref<16x16xf32, strided<[64, 1], offset: ?>>
      }
    }
  }
  return
}

// A matmul whose block's last rows are a register tile of their own after the loop (the
// block's 16 rows: two tiles of 6, then 4): grouped as above, then the group's programs
// each run those last rows in turn, in a loop of their own after the interleaved one.
// CHECK-LABEL: func.func @shared_pack_peeled_rows(
// CHECK: scf.forall (%[[M:[a-z0-9_]+]], %[[N:[a-z0-9_]+]]) in (2, 4) {
// CHECK: %[[BUF:[a-z0-9_]+]] = memref.alloc() : memref<64x16xf32>
// CHECK: scf.for %{{[a-z0-9_]+}} = %c0 to %c12 step %c6 {
// CHECK: scf.for %[[J:[a-z0-9_]+]] =
// CHECK-NEXT: %[[FIRST:[a-z0-9_]+]] = arith.muli %[[M]],
// CHECK-NEXT: arith.addi %[[FIRST]], %[[J]] : index
// CHECK: vector.transfer_read %[[BUF]]{{.*}} vector<6x16xf32>
// CHECK: scf.for %[[J2:[a-z0-9_]+]] =
// CHECK-NEXT: %[[FIRST2:[a-z0-9_]+]] = arith.muli %[[M]],
// CHECK-NEXT: arith.addi %[[FIRST2]], %[[J2]] : index
// CHECK: vector.transfer_read %[[BUF]]{{.*}} vector<4x16xf32>
// CHECK: vector.transfer_write %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}[%c12, %c0] {{.*}} : vector<4x16xf32>
func.func @shared_pack_peeled_rows(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c12 = arith.constant 12 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %zeros6 = arith.constant dense<0.0> : vector<6x16xf32>
  %zeros4 = arith.constant dense<0.0> : vector<4x16xf32>
  scf.forall (%i, %j) in (4, 4) {
    %row = arith.muli %i, %c16 : index
    %col = arith.muli %j, %c16 : index
    %tile = memref.subview %c[%row, %col] [16, 16] [1, 1] : memref<64x64xf32> to memref<16x16xf32, strided<[64, 1], offset: ?>>
    %buf = memref.alloc() : memref<64x16xf32>
    scf.for %k = %c0 to %c64 step %c1 {
      %v = vector.transfer_read %b[%k, %col], %zero {in_bounds = [true]} : memref<64x64xf32>, vector<16xf32>
      vector.transfer_write %v, %buf[%k, %c0] {in_bounds = [true]} : vector<16xf32>, memref<64x16xf32>
    }
    scf.for %r = %c0 to %c12 step %c6 {
      %sum = scf.for %k = %c0 to %c64 step %c1 iter_args(%s = %zeros6) -> (vector<6x16xf32>) {
        %ar = arith.addi %row, %r : index
        %x = vector.transfer_read %a[%ar, %k], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<6x16xf32>
        %p = vector.transfer_read %buf[%k, %c0], %zero {in_bounds = [true, true]} : memref<64x16xf32>, vector<6x16xf32>
        %f = vector.fma %x, %p, %s : vector<6x16xf32>
        scf.yield %f : vector<6x16xf32>
      }
      vector.transfer_write %sum, %tile[%r, %c0] {in_bounds = [true, true]} : vector<6x16xf32>, memref<16x16xf32, strided<[64, 1], offset: ?>>
    }
    %last = scf.for %k = %c0 to %c64 step %c1 iter_args(%s = %zeros4) -> (vector<4x16xf32>) {
      %ar = arith.addi %row, %c12 : index
      %x = vector.transfer_read %a[%ar, %k], %zero {in_bounds = [true, true]} : memref<64x64xf32>, vector<4x16xf32>
      %p = vector.transfer_read %buf[%k, %c0], %zero {in_bounds = [true, true]} : memref<64x16xf32>, vector<4x16xf32>
      %f = vector.fma %x, %p, %s : vector<4x16xf32>
      scf.yield %f : vector<4x16xf32>
    }
    vector.transfer_write %last, %tile[%c12, %c0] {in_bounds = [true, true]} : vector<4x16xf32>, memref<16x16xf32, strided<[64, 1], offset: ?>>
  }
  return
}

// CHECK-LABEL: func.func @pack_of_every_program(
// CHECK: scf.forall (%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (4, 4)
func.func @pack_of_every_program(%b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) in (4, 4) {
    %row = arith.muli %i, %c16 : index
    %col = arith.muli %j, %c16 : index
    %buf = memref.alloc() : memref<8x16xf32>
    scf.for %k = %c0 to %c64 step %c8 {
      scf.for %kk = %c0 to %c8 step %c1 {
        %kr = arith.addi %row, %kk : index
        %v = vector.transfer_read %b[%kr, %col], %zero {in_bounds = [true]} : memref<64x64xf32>, vector<16xf32>
        vector.transfer_write %v, %buf[%kk, %c0] {in_bounds = [true]} : vector<16xf32>, memref<8x16xf32>
      }
      %y = vector.transfer_read %buf[%c0, %c0], %zero {in_bounds = [true]} : memref<8x16xf32>, vector<16xf32>
      vector.transfer_write %y, %c[%row, %col] {in_bounds = [true]} : vector<16xf32>, memref<64x64xf32>
    }
  }
  return
}

// CHECK-LABEL: func.func @buffer_written_again(
// CHECK: scf.forall (%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in (4, 4)
func.func @buffer_written_again(%b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) in (4, 4) {
    %row = arith.muli %i, %c16 : index
    %col = arith.muli %j, %c16 : index
    %buf = memref.alloc() : memref<8x16xf32>
    scf.for %k = %c0 to %c64 step %c8 {
      scf.for %kk = %c0 to %c8 step %c1 {
        %kr = arith.addi %k, %kk : index
        %v = vector.transfer_read %b[%kr, %col], %zero {in_bounds = [true]} : memref<64x64xf32>, vector<16xf32>
        vector.transfer_write %v, %buf[%kk, %c0] {in_bounds = [true]} : vector<16xf32>, memref<8x16xf32>
      }
      %y = vector.transfer_read %c[%row, %col], %zero {in_bounds = [true]} : memref<64x64xf32>, vector<16xf32>
      vector.transfer_write %y, %buf[%c0, %c0] {in_bounds = [true]} : vector<16xf32>, memref<8x16xf32>
    }
  }
  return
}

// CHECK-LABEL: func.func @column_sum_in_row_steps(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<64x2048xf32>, %[[OUT:[a-z0-9_]+]]: memref<2048xf32>
// CHECK: scf.forall (%[[GROUP:[a-z0-9_]+]]) in (8) {
// CHECK: %[[STEPS:[a-z0-9_]+]] = arith.constant 8 : index
// CHECK: scf.for %[[S:[a-z0-9_]+]] = %{{[a-z0-9_]+}} to %[[STEPS]] step
// CHECK-NOT: iter_args
// CHECK: scf.for %[[J:[a-z0-9_]+]] =
// CHECK: %[[ACC:[a-z0-9_]+]] = memref.subview %[[OUT]]
// CHECK: %[[TILE:[a-z0-9_]+]] = arith.divui %[[S]], %{{[a-z0-9_]+}} : index
// CHECK: %[[IN:[a-z0-9_]+]] = arith.remui %[[S]], %{{[a-z0-9_]+}} : index
// CHECK: %[[STEP:[a-z0-9_]+]] = arith.muli %[[IN]], %{{[a-z0-9_]+}} : index
// CHECK: %[[OLD:[a-z0-9_]+]] = vector.transfer_read %[[ACC]][%{{[a-z0-9_]+}}]
// CHECK: %[[BASE:[a-z0-9_]+]] = arith.muli %[[TILE]],
// CHECK-NEXT: %[[ROW:[a-z0-9_]+]] = arith.addi %[[BASE]], %[[STEP]] : index
// CHECK-NEXT: %[[ROWS:[a-z0-9_]+]] = vector.transfer_read %[[X]][%[[ROW]],
// CHECK: %[[NEW:[a-z0-9_]+]] = arith.addf %[[OLD]],
// CHECK-NEXT: vector.transfer_write %[[NEW]], %[[ACC]][
func.func @column_sum_in_row_steps(%x: memref<64x2048xf32>, %out: memref<2048xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %pad = ub.poison : f32
  %zeros = arith.constant dense<0.0> : vector<32xf32>
  scf.forall (%i) in (64) {
    %col = arith.muli %i, %c32 : index
    %acc = memref.subview %out[%col] [32] [1] : memref<2048xf32> to memref<32xf32, strided<[1], offset: ?>>
    vector.transfer_write %zeros, %acc[%c0] {in_bounds = [true]} : vector<32xf32>, memref<32xf32, strided<[1], offset: ?>>
    scf.for %t = %c0 to %c2 step %c1 {
      %old = vector.transfer_read %acc[%c0], %pad {in_bounds = [true]} : memref<32xf32, strided<[1], offset: ?>>, vector<32xf32>
      %sum = scf.for %r = %c0 to %c32 step %c8 iter_args(%a = %old) -> (vector<32xf32>) {
        %base = arith.muli %t, %c32 : index
        %row = arith.addi %base, %r : index
        %rows = vector.transfer_read %x[%row, %col], %pad {in_bounds = [true, true]} : memref<64x2048xf32>, vector<8x32xf32>
        %first = vector.extract %rows[0] : vector<32xf32> from vector<8x32xf32>
        %next = arith.addf %a, %first : vector<32xf32>
        scf.yield %next : vector<32xf32>
      }
      vector.transfer_write %sum, %acc[%c0] {in_bounds = [true]} : vector<32xf32>, memref<32xf32, strided<[1], offset: ?>>
    }
  }
  return
}

// CHECK-LABEL: func.func @steps_that_read_the_output(
// CHECK: scf.for %{{[a-z0-9_]+}} = %{{[a-z0-9_]+}} to %{{[a-z0-9_]+}} step %{{[a-z0-9_]+}} iter_args(
func.func @steps_that_read_the_output(%x: memref<64x2048xf32>, %out: memref<2048xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %pad = ub.poison : f32
  scf.forall (%i) in (64) {
    %col = arith.muli %i, %c32 : index
    %acc = memref.subview %out[%col] [32] [1] : memref<2048xf32> to memref<32xf32, strided<[1], offset: ?>>
    scf.for %t = %c0 to %c2 step %c1 {
      %old = vector.transfer_read %acc[%c0], %pad {in_bounds = [true]} : memref<32xf32, strided<[1], offset: ?>>, vector<32xf32>
      %sum = scf.for %r = %c0 to %c32 step %c8 iter_args(%a = %old) -> (vector<32xf32>) {
        %seen = vector.transfer_read %out[%col], %pad {in_bounds = [true]} : memref<2048xf32>, vector<32xf32>
        %next = arith.addf %a, %seen : vector<32xf32>
        scf.yield %next : vector<32xf32>
      }
      vector.transfer_write %sum, %acc[%c0] {in_bounds = [true]} : vector<32xf32>, memref<32xf32, strided<[1], offset: ?>>
    }
  }
  return
}
