package a55fake

// The fake's own checks of A55's documented input rules. They are written
// here rather than borrowed from the client, so that a wrong client check
// is caught by a test against the fake instead of being mirrored by it.

// luhnValid reports whether n is all digits and passes the Luhn check.
func luhnValid(n string) bool {
	if n == "" {
		return false
	}
	sum := 0
	double := false
	for i := len(n) - 1; i >= 0; i-- {
		d := int(n[i]) - '0'
		if d < 0 || d > 9 {
			return false
		}
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// currencyValid reports whether c has the shape of an ISO 4217 code: three
// upper-case letters.
func currencyValid(c string) bool {
	if len(c) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if c[i] < 'A' || c[i] > 'Z' {
			return false
		}
	}
	return true
}
