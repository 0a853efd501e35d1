package a55test

import (
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
)

// TestPayer is a payer with every field A55 requires.
func TestPayer() a55.Payer {
	return a55.Payer{Name: "Maria Silva", Email: "maria.silva@example.com", TaxID: "39999999999", CellPhone: "+5511988887777",
		Address: a55.Address{Street: "Av. Paulista", Number: "1000", Neighborhood: "Bela Vista", City: "São Paulo",
			State: "SP", PostalCode: "01310-100", Country: "BR"}}
}

// CardCharge returns a card charge in A55's reference form, every
// required field set (TestPayer, due 2099-12-31) but the merchant and the
// wallet, which the client's account gives (Server.Client acts for
// Server.Account): amount BRL in one instalment on card number
// (CardConfirms, TestCard(d), ...), expiring 12/2099. Change what the test
// is about; the rest is valid.
func CardCharge(amount, number string) *a55.ChargeCreateRequest {
	v, err := payonce.ParseAmount(amount)
	if err != nil {
		panic("a55test.CardCharge: " + err.Error())
	}
	return &a55.ChargeCreateRequest{
		TypeCharge: a55.TypeCreditCard, Currency: payonce.BRL, InstallmentValue: v, InstallmentCount: 1,
		DueDate: "2099-12-31", Description: "test charge", Payer: TestPayer(),
		Card: &payonce.Card{Number: payonce.CardNumber(number), HolderName: "MARIA SILVA",
			ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"},
	}
}

// PixCharge returns a PIX charge of amount BRL in A55's reference form,
// every required field set but the merchant and the wallet (CardCharge).
func PixCharge(amount string) *a55.ChargeCreateRequest {
	r := CardCharge(amount, "")
	r.TypeCharge, r.Card = a55.TypePix, nil
	return r
}

// WalletRequest returns a create-wallet request in A55's reference form
// named name, every required field set.
func WalletRequest(name string) *a55.WalletCreateRequest {
	return &a55.WalletCreateRequest{EntityUUID: "550e8400-e29b-41d4-a716-446655440000", CustomerID: "cust_test",
		Currency: payonce.BRL, Name: name, Email: "financeiro@example.com"}
}

// Complete fills every required field r leaves empty with a test value
// (one instalment, due 2099-12-31, a description, TestPayer's fields) and
// returns r: a test sets what it is about, A55's required fields take care
// of themselves. The merchant and the wallet stay as r has them: empty,
// the client's account gives them (Server.Client acts for Server.Account).
func Complete(r *a55.ChargeCreateRequest) *a55.ChargeCreateRequest {
	set := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	if r.InstallmentCount == 0 {
		r.InstallmentCount = 1
	}
	set(&r.DueDate, "2099-12-31")
	set(&r.Description, "test charge")
	p, d := &r.Payer, TestPayer()
	set(&p.Name, d.Name)
	set(&p.Email, d.Email)
	set(&p.TaxID, d.TaxID)
	set(&p.CellPhone, d.CellPhone)
	a := &p.Address
	set(&a.Street, d.Address.Street)
	set(&a.City, d.Address.City)
	set(&a.State, d.Address.State)
	set(&a.PostalCode, d.Address.PostalCode)
	return r
}
