package a55fake

import "testing"

func TestParseDecimal(t *testing.T) {
	for _, tc := range []struct {
		in     string
		places int
		cents  int64
		err    error
	}{
		{"100", 2, 10000, nil}, {"100.5", 2, 10050, nil}, {"100.50", 2, 10050, nil}, {"100.500000", 2, 10050, nil},
		{"0.01", 2, 1, nil}, {"007.10", 2, 710, nil}, {"100", 0, 10000, nil}, {"100.00", 0, 10000, nil},
		{"100.5", 0, 0, errAmountPrecision}, {"1.001", 2, 0, errAmountPrecision}, {"-1", 2, 0, errAmountSyntax},
		{"1e2", 2, 0, errAmountSyntax}, {"", 2, 0, errAmountSyntax}, {".5", 2, 0, errAmountSyntax}, {"5.", 2, 0, errAmountSyntax},
		{"1,00", 2, 0, errAmountSyntax}, {" 1", 2, 0, errAmountSyntax}, {"9999999999999", 2, 999999999999900, nil},
		{"10000000000000", 2, 0, errAmountTooLarge},
	} {
		d, err := parseDecimal(tc.in, tc.places)
		if err != tc.err || d.cents != tc.cents {
			t.Errorf("parseDecimal(%q, %d) = %d, %v; want %d, %v", tc.in, tc.places, d.cents, err, tc.cents, tc.err)
		}
	}
	if _, err := parsePositive("0.00", 2); err != errAmountZero {
		t.Errorf("zero: %v", err)
	}
	for _, tc := range []struct {
		cents  int64
		places int
		want   string
	}{{10050, 2, "100.50"}, {1, 2, "0.01"}, {0, 2, "0.00"}, {10000, 0, "100"}, {999999999999900, 2, "9999999999999.00"}} {
		if got := (decimal{tc.cents}).text(tc.places); got != tc.want {
			t.Errorf("text(%d, %d) = %q, want %q", tc.cents, tc.places, got, tc.want)
		}
	}
}
