package pkg

// TestOnly is in a test file: not counted.
func TestOnly() {}
