// With bounds checks, each memref access is verified at run time: an index outside
// [0, size) prints the op and aborts.
// RUN: helion-opt %s --helion-buffers-to-llvm-checked | FileCheck %s

// CHECK: llvm.func @abort()
// CHECK: llvm.func @puts(!llvm.ptr)
// CHECK-LABEL: llvm.func @copy(
// CHECK: %[[LOW:[a-z0-9_]+]] = llvm.icmp "sge" %[[I:[a-z0-9_]+]], %{{[a-z0-9_]+}} : i64
// CHECK-NEXT: %[[HIGH:[a-z0-9_]+]] = llvm.icmp "slt" %[[I]], %{{[a-z0-9_]+}} : i64
// CHECK-NEXT: %[[INSIDE:[a-z0-9_]+]] = llvm.and %[[LOW]], %[[HIGH]] : i1
// CHECK-NEXT: llvm.cond_br %[[INSIDE]]
// CHECK: llvm.call @puts(
// CHECK: llvm.call @abort()
func.func @copy(%a: memref<4xf32>, %b: memref<4xf32>, %i: index) {
  %x = memref.load %a[%i] : memref<4xf32>
  memref.store %x, %b[%i] : memref<4xf32>
  return
}
