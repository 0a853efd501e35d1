package pkg

import "errors"

// ErrX is a sentinel.
var ErrX = errors.New("x")

// T is a type.
type T struct{}

// New returns a T.
func New() *T { return &T{} }

// Do does something
// over several lines.
func (t *T) Do() {
	_ = t
}

// String satisfies fmt.Stringer.
func (T) String() string { return "t" }

type hidden struct{}

// Exported is a method of an unexported type: not counted.
func (hidden) Exported() {}

func helper() {}
