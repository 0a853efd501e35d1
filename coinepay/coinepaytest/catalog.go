package coinepaytest

import (
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/fakeserver/coinepayfake"
)

// Package is a card catalog entry for WithCatalog: card/apply accepts this
// header_id and package_id and charges Fee to the balance.
type Package struct {
	HeaderID  string         // the card header (BIN range)
	PackageID string         // the fee package
	Fee       payonce.Amount // charged to the API key's balance per card
}

func catalog(in []Package) []coinepayfake.Package {
	out := make([]coinepayfake.Package, len(in))
	for i, p := range in {
		out[i] = coinepayfake.Package(p) // the same fields: the compiler keeps them in step
	}
	return out
}
