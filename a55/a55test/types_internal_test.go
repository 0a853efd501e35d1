package a55test

import (
	"testing"

	"github.com/payonce/payonce/internal/fakeserver"
	"github.com/payonce/payonce/internal/fieldtest"
)

// The wrappers carry every field between the engine and the test API.
func TestConversionsCarryEveryField(t *testing.T) {
	var r Rule
	fieldtest.Fill(t, &r)
	fieldtest.SameFields(t, r.engine(), r)

	var op fakeserver.Operation
	fieldtest.Fill(t, &op)
	fieldtest.SameFields(t, op, operations([]fakeserver.Operation{op})[0])

	var a fakeserver.Attempt
	fieldtest.Fill(t, &a)
	fieldtest.SameFields(t, a, attempts([]fakeserver.Attempt{a})[0])

	var st fakeserver.Stats
	fieldtest.Fill(t, &st)
	fieldtest.SameFields(t, st, stats(st))
}
