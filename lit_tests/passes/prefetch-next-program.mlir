// A program's second loop over its row of a kernel argument prefetches the next program's
// row, one prefetch per 64-byte line, the row index clamped to the last program and line
// offsets past the first clamped into the row; the first loop (the demand reads), reads
// that do not depend on the program (a weight row) and a one-pass program get none.
// RUN: helion-opt %s --helion-prefetch-next-program | FileCheck %s

// CHECK-LABEL: func.func @two_passes(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<37x1000xf32>, %[[W:[a-z0-9_]+]]: memref<1000xf32>
// CHECK: scf.forall (%[[ROW:.*]]) in (37)
// CHECK: scf.for
// CHECK-NOT: memref.prefetch
// CHECK: vector.transfer_read %[[X]][%[[ROW]], %{{.*}}]
// CHECK: scf.for %[[COL:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[NEXT:.*]] = arith.addi %[[ROW]], %{{.*}} : index
// CHECK: %[[CLAMPED:.*]] = arith.minsi %[[NEXT]], %c36 : index
// CHECK: memref.prefetch %[[X]][%[[CLAMPED]], %[[COL]]], read, locality<3>, data : memref<37x1000xf32>
// CHECK: %[[AT16:.*]] = arith.addi %[[COL]], %c16 : index
// CHECK: %[[IN16:.*]] = arith.minsi %[[AT16]], %c999 : index
// CHECK: memref.prefetch %[[X]][%[[CLAMPED]], %[[IN16]]]
// CHECK-COUNT-2: memref.prefetch %[[X]]
// CHECK-NOT: memref.prefetch %[[W]]
// CHECK: vector.transfer_read %[[X]][%[[ROW]], %[[COL]]]
func.func @two_passes(%x: memref<37x1000xf32>, %w: memref<1000xf32>, %out: memref<37x1000xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c960 = arith.constant 960 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  scf.forall (%row) in (37) {
    %max = scf.for %col = %c0 to %c960 step %c64 iter_args(%acc = %zero) -> (vector<64xf32>) {
      %v = vector.transfer_read %x[%row, %col], %pad {in_bounds = [true]} : memref<37x1000xf32>, vector<64xf32>
      %m = arith.maximumf %acc, %v : vector<64xf32>
      scf.yield %m : vector<64xf32>
    }
    scf.for %col = %c0 to %c960 step %c64 {
      %v = vector.transfer_read %x[%row, %col], %pad {in_bounds = [true]} : memref<37x1000xf32>, vector<64xf32>
      %w64 = vector.transfer_read %w[%col], %pad {in_bounds = [true]} : memref<1000xf32>, vector<64xf32>
      %s = arith.subf %v, %max : vector<64xf32>
      %e = arith.mulf %s, %w64 : vector<64xf32>
      vector.transfer_write %e, %out[%row, %col] {in_bounds = [true]} : vector<64xf32>, memref<37x1000xf32>
    }
  }
  return
}

// CHECK-LABEL: func.func @one_pass(
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func @one_pass(%x: memref<37x1000xf32>, %out: memref<37x1000xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c960 = arith.constant 960 : index
  %pad = arith.constant 0.0 : f32
  scf.forall (%row) in (37) {
    scf.for %col = %c0 to %c960 step %c64 {
      %v = vector.transfer_read %x[%row, %col], %pad {in_bounds = [true]} : memref<37x1000xf32>, vector<64xf32>
      %d = arith.addf %v, %v : vector<64xf32>
      vector.transfer_write %d, %out[%row, %col] {in_bounds = [true]} : vector<64xf32>, memref<37x1000xf32>
    }
  }
  return
}

// A grid of a size known at run time: the last program is its size less one; the row's
// length is the argument's dim.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: memref<?x?xf32>, %{{.*}}: memref<?x?xf32>, %[[N:[a-z0-9_]+]]: index
// CHECK: scf.forall (%[[ROW:.*]]) in (%[[N]])
// CHECK: %[[LAST:.*]] = arith.subi %[[N]], %c1{{.*}} : index
// CHECK: scf.for %[[COL:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[NEXT:.*]] = arith.minsi %{{.*}}, %[[LAST]] : index
// CHECK: %[[WIDTH:.*]] = memref.dim %[[X]], %c1
// CHECK: %[[END:.*]] = arith.subi %[[WIDTH]], %c1
// CHECK: memref.prefetch %[[X]][%[[NEXT]], %[[COL]]]
// CHECK: %[[AT16:.*]] = arith.addi %[[COL]], %c16 : index
// CHECK: arith.minsi %[[AT16]], %[[END]] : index
// CHECK-COUNT-3: memref.prefetch %[[X]]
func.func @dynamic_rows(%x: memref<?x?xf32>, %out: memref<?x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c960 = arith.constant 960 : index
  %pad = arith.constant 0.0 : f32
  %zero = arith.constant dense<0.0> : vector<64xf32>
  scf.forall (%row) in (%n) {
    %max = scf.for %col = %c0 to %c960 step %c64 iter_args(%acc = %zero) -> (vector<64xf32>) {
      %v = vector.transfer_read %x[%row, %col], %pad {in_bounds = [true]} : memref<?x?xf32>, vector<64xf32>
      %m = arith.maximumf %acc, %v : vector<64xf32>
      scf.yield %m : vector<64xf32>
    }
    scf.for %col = %c0 to %c960 step %c64 {
      %v = vector.transfer_read %x[%row, %col], %pad {in_bounds = [true]} : memref<?x?xf32>, vector<64xf32>
      %s = arith.subf %v, %max : vector<64xf32>
      vector.transfer_write %s, %out[%row, %col] {in_bounds = [true]} : vector<64xf32>, memref<?x?xf32>
    }
  }
  return
}
