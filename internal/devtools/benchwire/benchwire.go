package benchwire

import (
	"encoding/json"
	"time"
)

// ChargeAnswer is A55's answer to a confirmed card charge, in the
// reference's fields.
const ChargeAnswer = `{"charge_uuid":"53213ba7-28f7-4b48-9796-989dff453bc7","wallet_uuid":"00000000-0000-0000-0000-000000000000",` +
	`"merchant_id":"11111111-1111-1111-1111-111111111111","status":"confirmed","type_charge":"credit_card","currency":"BRL",` +
	`"local_currency":100.00,"installment_value":100.00,"installment_count":1,"due_date":"2099-12-31","description":"Order 42",` +
	`"transaction_reference":"txn-abc-123","message":[],"created_at":"2026-12-02T00:13:27.258965821Z",` +
	`"updated_at":"2026-12-02T00:13:27.258965821Z"}`

// ApplyAnswer is the Coinepay fake's envelope around an issued card, byte
// for byte.
const ApplyAnswer = `{"code":200,"message":"ok","message_key":"success","data":{"account_balance":"999.00",` +
	`"balance":"0.00","card_id":"card_878738babb81cfb02a1cd3b3","created_at":"2026-12-02T00:16:04.258560323Z",` +
	`"currency":"USD","fee":"1.00","header_id":"hdr_1","package_id":"pkg_basic","status":"active"}}`

// Address is a payer's address as a bare client sends it.
type Address struct {
	Street       string `json:"street"`
	Number       string `json:"address_number"`
	Complement   string `json:"complement"`
	Neighborhood string `json:"neighborhood"`
	City         string `json:"city"`
	State        string `json:"state"`
	PostalCode   string `json:"postal_code"`
	Country      string `json:"country"`
}

// ChargeRequest is the charge a bare client sends, in the create-charge
// reference's flat form with the card whole: the bytes the a55 client
// sends for the same request (a55's benchmark test holds them equal).
type ChargeRequest struct {
	WalletUUID       string      `json:"wallet_uuid"`
	MerchantID       string      `json:"merchant_id"`
	PayerName        string      `json:"payer_name"`
	PayerEmail       string      `json:"payer_email"`
	PayerTaxID       string      `json:"payer_tax_id"`
	PayerCellPhone   string      `json:"payer_cell_phone"`
	InstallmentValue json.Number `json:"installment_value"`
	InstallmentCount int         `json:"installment_count"`
	Currency         string      `json:"currency"`
	DueDate          string      `json:"due_date"`
	Description      string      `json:"description"`
	TypeCharge       string      `json:"type_charge"`
	PayerAddress     Address     `json:"payer_address"`
	CardNumber       string      `json:"card_number"`
	CardName         string      `json:"card_name"`
	CardExpiryMonth  string      `json:"card_expiry_month"`
	CardExpiryYear   string      `json:"card_expiry_year"`
	CardCVV          string      `json:"card_cvv"`
}

// NewChargeRequest is the benchmarks' charge: 100.00 BRL in one
// instalment on card number, with the payer and address the reference
// requires.
func NewChargeRequest(number string) *ChargeRequest {
	return &ChargeRequest{
		WalletUUID: "00000000-0000-0000-0000-000000000000", MerchantID: "11111111-1111-1111-1111-111111111111",
		PayerName: "João Silva", PayerEmail: "joao.silva@example.com", PayerTaxID: "39999999999", PayerCellPhone: "+5511988887777",
		InstallmentValue: "100.00", InstallmentCount: 1, Currency: "BRL", DueDate: "2099-12-31", Description: "Order 42",
		TypeCharge: "credit_card",
		PayerAddress: Address{Street: "Av. Paulista", Number: "1000", Complement: "Apto 42", Neighborhood: "Bela Vista",
			City: "São Paulo", State: "SP", PostalCode: "01310-100", Country: "BR"},
		CardNumber: number, CardName: "JOAO SILVA", CardExpiryMonth: "12", CardExpiryYear: "2099", CardCVV: "123",
	}
}

// Charge is what a bare client decodes a charge answer into: the fields
// of a55.Charge as plain values, with no checks and no masking.
type Charge struct {
	UUID                 string      `json:"charge_uuid"`
	WalletUUID           string      `json:"wallet_uuid"`
	MerchantID           string      `json:"merchant_id"`
	Status               string      `json:"status"`
	TypeCharge           string      `json:"type_charge"`
	Currency             string      `json:"currency"`
	LocalCurrency        json.Number `json:"local_currency"`
	InstallmentValue     json.Number `json:"installment_value"`
	InstallmentCount     int         `json:"installment_count"`
	DueDate              string      `json:"due_date"`
	Description          string      `json:"description"`
	TransactionReference string      `json:"transaction_reference"`
	Messages             []struct {
		Code        string `json:"code"`
		Description string `json:"description"`
	} `json:"message"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	IdempotencyKey string    `json:"idempotency_key"`
}

// Apply is what a bare client decodes an apply answer into: the envelope
// and the card, plain strings and no checks.
type Apply struct {
	Code       int    `json:"code"`
	Message    string `json:"message"`
	MessageKey string `json:"message_key"`
	Data       struct {
		CardID         string    `json:"card_id"`
		HeaderID       string    `json:"header_id"`
		PackageID      string    `json:"package_id"`
		Status         string    `json:"status"`
		Currency       string    `json:"currency"`
		Balance        string    `json:"balance"`
		Fee            string    `json:"fee"`
		AccountBalance string    `json:"account_balance"`
		CreatedAt      time.Time `json:"created_at"`
	} `json:"data"`
}
