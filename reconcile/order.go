package reconcile

import (
	"fmt"
	"regexp"
	"strings"
)

// DefaultOrderPattern is the order rule of the documented reference
// convention, one reference per payment attempt: "order-42/attempt-1",
// "order-42/attempt-2" are attempts of the order "order-42".
const DefaultOrderPattern = `^(.+)/attempt-[0-9]+$`

// OrderRule names the order a journal reference is an attempt of; ok is
// false when the reference names no order (the entry is then an order of
// its own, and never one of two successful attempts).
type OrderRule func(reference string) (order string, ok bool)

// OrderPattern is the OrderRule of a regular expression (RE2 syntax) with
// exactly one capture group: a reference the expression matches is an
// attempt of the order the group captured; an empty capture names none.
func OrderPattern(expr string) (OrderRule, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%w: order pattern: %w", ErrInvalidOptions, err)
	}
	if re.NumSubexp() != 1 {
		return nil, fmt.Errorf("%w: order pattern %q: want exactly one capture group, the order, got %d", ErrInvalidOptions, expr, re.NumSubexp())
	}
	return func(ref string) (string, bool) {
		m := re.FindStringSubmatch(ref)
		if m == nil || m[1] == "" {
			return "", false
		}
		return m[1], true
	}, nil
}

// AttemptOrders is the OrderRule of DefaultOrderPattern: the reference
// up to its last "/attempt-" followed by digits alone.
func AttemptOrders() OrderRule {
	const sep = "/attempt-"
	return func(ref string) (string, bool) {
		i := strings.LastIndex(ref, sep)
		if i <= 0 {
			return "", false
		}
		if n := ref[i+len(sep):]; n == "" || strings.Trim(n, "0123456789") != "" {
			return "", false
		}
		return ref[:i], true
	}
}
