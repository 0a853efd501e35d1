// Package benchwire holds what the benchmarks of the typed clients send
// and answer, so that every benchmark of one operation (the package's
// own, the peer benchmark under bench/) uses the same bytes: the answers
// an httptest server gives, and the plain structs a bare net/http client
// decodes them into.
package benchwire

import "time"

// ChargeAnswer is the A55 fake's answer to a confirmed card charge, byte
// for byte.
const ChargeAnswer = `{"charge_uuid":"53213ba7-28f7-4b48-9796-989dff453bc7","wallet_uuid":"f562a9bb-baea-4300-b545-4e8474d3ca37",` +
	`"status":"confirmed","amount":"100.00","captured_amount":"100.00","refunded_amount":"0.00","currency":"BRL",` +
	`"type_charge":"credit_card","capture":true,"card":{"last4":"1111","holder_name":"TEST","expiration_month":"12",` +
	`"expiration_year":"2099"},"message":[],"created_at":"2026-12-02T00:13:27.258965821Z",` +
	`"updated_at":"2026-12-02T00:13:27.258965821Z","idempotency_key":"78bca468-1b6f-4d75-8089-26c00231b03c"}`

// ApplyAnswer is the Coinepay fake's envelope around an issued card, byte
// for byte.
const ApplyAnswer = `{"code":200,"message":"ok","message_key":"success","data":{"account_balance":"999.00",` +
	`"balance":"0.00","card_id":"card_878738babb81cfb02a1cd3b3","created_at":"2026-12-02T00:16:04.258560323Z",` +
	`"currency":"USD","fee":"1.00","header_id":"hdr_1","package_id":"pkg_basic","status":"active"}}`

// Card is a card as a bare client sends it, whole.
type Card struct {
	Number          string `json:"number"`
	HolderName      string `json:"holder_name"`
	ExpirationMonth string `json:"expiration_month"`
	ExpirationYear  string `json:"expiration_year"`
	CVV             string `json:"cvv"`
}

// ChargeRequest is the charge a bare client sends: the bytes the a55
// client sends for the same request.
type ChargeRequest struct {
	Amount     string `json:"amount"`
	Currency   string `json:"currency"`
	TypeCharge string `json:"type_charge"`
	Card       *Card  `json:"card"`
}

// NewChargeRequest is the benchmarks' charge: 100.00 BRL on card number.
func NewChargeRequest(number string) *ChargeRequest {
	return &ChargeRequest{Amount: "100.00", Currency: "BRL", TypeCharge: "credit_card",
		Card: &Card{Number: number, HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"}}
}

// Charge is what a bare client decodes a charge answer into: the fields
// of a55.Charge as plain strings, with no checks and no masking.
type Charge struct {
	UUID           string `json:"charge_uuid"`
	WalletUUID     string `json:"wallet_uuid"`
	Status         string `json:"status"`
	Amount         string `json:"amount"`
	CapturedAmount string `json:"captured_amount"`
	RefundedAmount string `json:"refunded_amount"`
	Currency       string `json:"currency"`
	TypeCharge     string `json:"type_charge"`
	Card           *Card  `json:"card"`
	Messages       []struct {
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
