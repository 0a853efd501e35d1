package coinepaytest

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
	got := attempts([]fakeserver.Attempt{a})[0]
	fieldtest.SameFieldsExcept(t, a, got, "SignatureChecked", "SignatureValid")
	assert.True(t, got.SignatureChecked)
	assert.Equal(t, *a.SignatureValid, got.SignatureValid)
	a.SignatureValid = nil
	got = attempts([]fakeserver.Attempt{a})[0]
	assert.False(t, got.SignatureChecked, "nil: not checked")
	assert.False(t, got.SignatureValid)

	var st fakeserver.Stats
	fieldtest.Fill(t, &st)
	fieldtest.SameFields(t, st, stats(st))
}

func TestCatalogCarriesEveryField(t *testing.T) {
	var p Package
	fieldtest.Fill(t, &p)
	fieldtest.SameFields(t, catalog([]Package{p})[0], p)
}
