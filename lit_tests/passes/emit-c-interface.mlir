// Every func is marked for a C interface (ExecutionEngine.invoke calls through it).
// RUN: helion-opt %s --helion-emit-c-interface | FileCheck %s

// CHECK-LABEL: func.func @kernel(
// CHECK-SAME: attributes {llvm.emit_c_interface}
func.func @kernel(%x: f32) -> f32 {
  return %x : f32
}

// CHECK-LABEL: func.func private @declared(
// CHECK-SAME: attributes {llvm.emit_c_interface}
func.func private @declared(f32) -> f32
