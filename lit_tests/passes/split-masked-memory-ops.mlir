// A masked load or store wider than 256 bits becomes 256-bit chunks: each chunk's mask
// and pass-through lanes are shuffled out, its pointer offset by the lanes before it, and
// the loaded chunks are shuffled back together. 256-bit ones are left alone.
// RUN: helion-opt %s --helion-split-masked-memory-ops | FileCheck %s

// CHECK-LABEL: llvm.func @copy(
// CHECK-SAME: %[[SRC:[a-z0-9_]+]]: !llvm.ptr, %[[DST:[a-z0-9_]+]]: !llvm.ptr, %[[MASK:[a-z0-9_]+]]: vector<16xi1>, %[[PASS:[a-z0-9_]+]]: vector<16xf32>
// CHECK-NEXT: %[[M0:[a-z0-9_]+]] = llvm.shufflevector %[[MASK]], %[[MASK]] [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xi1>
// CHECK-NEXT: %[[P0:[a-z0-9_]+]] = llvm.shufflevector %[[PASS]], %[[PASS]] [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xf32>
// CHECK-NEXT: %[[L0:[a-z0-9_]+]] = llvm.intr.masked.load %[[SRC]], %[[M0]], %[[P0]] {alignment = 4 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT: %[[SRC1:[a-z0-9_]+]] = llvm.getelementptr %[[SRC]][8] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT: %[[M1:[a-z0-9_]+]] = llvm.shufflevector %[[MASK]], %[[MASK]] [8, 9, 10, 11, 12, 13, 14, 15] : vector<16xi1>
// CHECK-NEXT: %[[P1:[a-z0-9_]+]] = llvm.shufflevector %[[PASS]], %[[PASS]] [8, 9, 10, 11, 12, 13, 14, 15] : vector<16xf32>
// CHECK-NEXT: %[[L1:[a-z0-9_]+]] = llvm.intr.masked.load %[[SRC1]], %[[M1]], %[[P1]] {alignment = 4 : i32}
// CHECK-NEXT: %[[V:[a-z0-9_]+]] = llvm.shufflevector %[[L0]], %[[L1]] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<8xf32>
// CHECK-NEXT: %[[S0:[a-z0-9_]+]] = llvm.shufflevector %[[V]], %[[V]] [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xf32>
// CHECK-NEXT: %[[SM0:[a-z0-9_]+]] = llvm.shufflevector %[[MASK]], %[[MASK]] [0, 1, 2, 3, 4, 5, 6, 7] : vector<16xi1>
// CHECK-NEXT: llvm.intr.masked.store %[[S0]], %[[DST]], %[[SM0]] {alignment = 4 : i32} : vector<8xf32>, vector<8xi1> into !llvm.ptr
// CHECK-NEXT: %[[DST1:[a-z0-9_]+]] = llvm.getelementptr %[[DST]][8] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK-NEXT: %[[S1:[a-z0-9_]+]] = llvm.shufflevector %[[V]], %[[V]] [8, 9, 10, 11, 12, 13, 14, 15] : vector<16xf32>
// CHECK-NEXT: %[[SM1:[a-z0-9_]+]] = llvm.shufflevector %[[MASK]], %[[MASK]] [8, 9, 10, 11, 12, 13, 14, 15] : vector<16xi1>
// CHECK-NEXT: llvm.intr.masked.store %[[S1]], %[[DST1]], %[[SM1]] {alignment = 4 : i32} : vector<8xf32>, vector<8xi1> into !llvm.ptr
llvm.func @copy(%src: !llvm.ptr, %dst: !llvm.ptr, %mask: vector<16xi1>, %pass: vector<16xf32>) {
  %v = llvm.intr.masked.load %src, %mask, %pass {alignment = 4 : i32} : (!llvm.ptr, vector<16xi1>, vector<16xf32>) -> vector<16xf32>
  llvm.intr.masked.store %v, %dst, %mask {alignment = 4 : i32} : vector<16xf32>, vector<16xi1> into !llvm.ptr
  llvm.return
}

// CHECK-LABEL: llvm.func @one_chunk(
// CHECK-NEXT: llvm.intr.masked.load %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {alignment = 4 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xf32>) -> vector<8xf32>
// CHECK-NEXT: llvm.return
llvm.func @one_chunk(%src: !llvm.ptr, %mask: vector<8xi1>, %pass: vector<8xf32>) -> vector<8xf32> {
  %v = llvm.intr.masked.load %src, %mask, %pass {alignment = 4 : i32} : (!llvm.ptr, vector<8xi1>, vector<8xf32>) -> vector<8xf32>
  llvm.return %v : vector<8xf32>
}
