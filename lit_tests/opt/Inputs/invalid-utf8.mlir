module {
  func.func @f() {
    return // café ÿ
  }
}
