package payonce_test

import (
	"strings"
	"testing"

	"github.com/payonce/payonce"
	"github.com/stretchr/testify/assert"
)

func TestReferenceTemplate(t *testing.T) {
	for ref, want := range map[string]string{
		"order-42/charge":                            "order-{id}/charge",
		"order-42/refund-2":                          "order-{id}/refund-{id}",
		"order:550e8400-e29b-41d4-a716-446655440000": "order:{id}",
		"invoice_2026_001.capture":                   "invoice_{id}.capture",
		"subscription/ABC123xyz/renewal":             "subscription/{id}/renewal",
		"checkout":                                   "checkout",
		"cliente-josé/charge":                        "{id}/charge",
		"order-42-beef/charge":                       "order-{id}/charge",
		"face-a1/charge":                             "{id}/charge",
		"user@example.com/charge":                    "{id}/charge",
		"order 42":                                   "{id}",
		"":                                           "",
		"averylongwordthatisnokindofthingatallreally/x": "{id}/x",
	} {
		assert.Equal(t, want, payonce.ReferenceTemplate(ref), ref)
	}
}

// However many orders, one template; no digit of a reference survives.
func TestReferenceTemplateHasBoundedValues(t *testing.T) {
	seen := map[string]bool{}
	for i := range 1000 {
		seen[payonce.ReferenceTemplate("order-"+strings.Repeat("7", i%9+1)+"/charge")] = true
	}
	assert.Len(t, seen, 1)
}
