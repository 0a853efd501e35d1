package coinepaytest

import (
	"fmt"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/fake/coinepayfake"
	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// Package is a card catalog entry for WithCatalog: card/apply accepts this
// header_id and package_id and charges Fee to the balance.
type Package struct {
	HeaderID  string         // the card header (BIN range)
	PackageID string         // the fee package
	Fee       payonce.Amount // charged to the API key's balance per card
}

func catalog(in []Package) ([]coinepayfake.Package, error) {
	out := make([]coinepayfake.Package, len(in))
	for i, p := range in {
		fee, err := fakeAmount(p.Fee)
		if err != nil {
			return nil, fmt.Errorf("%w: coinepaytest.WithCatalog: package %q/%q: %w", payonce.ErrInvalidConfig, p.HeaderID, p.PackageID, err)
		}
		out[i] = coinepayfake.Package{HeaderID: p.HeaderID, PackageID: p.PackageID, Fee: fee}
	}
	return out, nil
}

// fakeAmount is a in the fake's own money type. The SDK's amount and the
// fake's are written apart and meet only here, through the wire form
// both read and write ("100.00"), so that neither can hide a mistake of
// the other.
func fakeAmount(a payonce.Amount) (fakeserver.Decimal, error) {
	return fakeserver.ParseDecimal(a.String())
}

// sdkAmount is d as the SDK's amount, read from the same wire form.
func sdkAmount(d fakeserver.Decimal) payonce.Amount {
	a, err := payonce.ParseAmount(d.String())
	if err != nil {
		// Both read the fake's form: this is a bug in one of them.
		panic(fmt.Sprintf("coinepaytest: the fake's amount %s is no payonce.Amount: %v", d, err))
	}
	return a
}
