package a55fake

import "slices"

// The request bodies the fake takes, written down from A55's API
// reference in the fake's own words: every name, JSON type, required
// flag and enum. The client has its own list; both are held to
// testdata/a55/reference.json by their tests, so neither drifts alone.

// jsonKind is the JSON type a field takes.
type jsonKind uint8

const (
	kString jsonKind = iota + 1
	kNumber
	kInteger
	kBool
	kObject
	kArray  // of objects: fields are each element's
	kAmount // a number, or a decimal string (the guide's body forms)
)

func (k jsonKind) String() string {
	switch k {
	case kString:
		return "string"
	case kNumber:
		return "number"
	case kInteger:
		return "integer"
	case kBool:
		return "boolean"
	case kObject:
		return "object"
	case kArray:
		return "array"
	case kAmount:
		return "number"
	}
	return "value"
}

// field is one member of a request body.
type field struct {
	name     string
	kind     jsonKind
	required bool
	enum     []string
	fields   []field // members of an object, or of each element of an array
	open     bool    // the object may hold members not listed (device_info)
}

// Enums of the reference.
var (
	chargeCurrencies = []string{"BRL", "MXN", "CLP", "COP", "PEN", "ARS", "USD"}
	walletCurrencies = []string{"BRL", "MXN", "CLP", "ARS"}
	typeChargeEnum   = []string{typeCredit, typeDebit, typePix, typeBoleto, typeApplePay, typeGooglePay}
	cycleEnum        = []string{"weekly", "biweekly", "monthly", "quarterly", "semiannually", "yearly"}
	walletPayTypes   = []string{typeCredit, typeDebit}
)

// Methods (type_charge).
const (
	typeCredit    = "credit_card"
	typeDebit     = "debit_card"
	typePix       = "pix"
	typeBoleto    = "boleto"
	typeApplePay  = "applepay"
	typeGooglePay = "googlepay"
)

// Card fields of the flat body: all five or none.
const (
	fCardNumber = "card_number"
	fCardName   = "card_name"
	fCardMonth  = "card_expiry_month"
	fCardYear   = "card_expiry_year"
	fCardCVV    = "card_cvv"
)

var cardFieldNames = []string{fCardNumber, fCardName, fCardMonth, fCardYear, fCardCVV}

// payerAddressFields is payer_address.
var payerAddressFields = []field{
	{name: "street", kind: kString, required: true},
	{name: "address_number", kind: kString},
	{name: "complement", kind: kString},
	{name: "neighborhood", kind: kString},
	{name: "city", kind: kString, required: true},
	{name: "state", kind: kString, required: true},
	{name: "postal_code", kind: kString, required: true},
	{name: "country", kind: kString},
}

// tokenPayFields are the applepay and googlepay objects.
var tokenPayFields = []field{
	{name: "eci", kind: kString, required: true},
	{name: "cavv", kind: kString, required: true},
	{name: "type", kind: kString, enum: walletPayTypes},
}

// accountPayerFields open both create bodies: the account the charge is
// for and the payer (create-charge and create-pix-charge pages).
var accountPayerFields = []field{
	{name: "wallet_uuid", kind: kString, required: true},
	{name: "merchant_id", kind: kString, required: true},
	{name: "payer_name", kind: kString, required: true},
	{name: "payer_email", kind: kString, required: true},
	{name: "payer_tax_id", kind: kString, required: true},
	{name: "payer_cell_phone", kind: kString, required: true},
}

// createChargeFields is the body of POST /api/v1/bank/wallet/charge/
// (create-charge page, with the card, 3DS, subscription and wallet-pay
// fields of their own pages).
var createChargeFields = append(slices.Clip(accountPayerFields), []field{
	{name: "installment_value", kind: kNumber, required: true},
	{name: "installment_count", kind: kInteger, required: true},
	{name: "currency", kind: kString, required: true, enum: chargeCurrencies},
	{name: "due_date", kind: kString, required: true},
	{name: "description", kind: kString, required: true},
	{name: "type_charge", kind: kString, required: true, enum: typeChargeEnum},
	{name: "payer_address", kind: kObject, required: true, fields: payerAddressFields},
	{name: "items", kind: kArray, fields: []field{
		{name: "name", kind: kString, required: true},
		{name: "description", kind: kString},
		{name: "quantity", kind: kInteger, required: true},
		{name: "total_amount", kind: kNumber},
		{name: "unit_amount", kind: kNumber},
		{name: "sku", kind: kString},
		{name: "code", kind: kString},
	}},
	{name: "capture", kind: kBool},
	{name: "webhook_url", kind: kString},
	{name: "redirect_url", kind: kString},
	{name: "subscription", kind: kObject, fields: []field{
		{name: "cycle", kind: kString, required: true, enum: cycleEnum},
		{name: "end_date", kind: kString},
	}},
	{name: fCardNumber, kind: kString},
	{name: fCardName, kind: kString},
	{name: fCardMonth, kind: kString},
	{name: fCardYear, kind: kString},
	{name: fCardCVV, kind: kString},
	{name: "threeds_authentication", kind: kBool},
	{name: "device_info", kind: kObject, open: true, fields: []field{
		{name: "ip_address", kind: kString},
		{name: "user_agent", kind: kString},
		{name: "http_accept_content", kind: kString},
		{name: "http_accept_browser_value", kind: kString},
		{name: "http_browser_language", kind: kString},
		{name: "http_browser_java_enabled", kind: kBool},
		{name: "http_browser_javascript_enabled", kind: kBool},
		{name: "http_browser_color_depth", kind: kString},
		{name: "http_browser_screen_height", kind: kString},
		{name: "http_browser_screen_width", kind: kString},
		{name: "http_browser_time_difference", kind: kString},
		{name: "session_id", kind: kString},
	}},
	{name: typeApplePay, kind: kObject, fields: tokenPayFields},
	{name: typeGooglePay, kind: kObject, fields: tokenPayFields},
}...)

// createPixFields is the body of POST /api/v1/bank/wallet/charge/pix/
// (create-pix-charge page): amount instead of installment_value, BRL only.
var createPixFields = append(slices.Clip(accountPayerFields), []field{
	{name: "amount", kind: kNumber, required: true},
	{name: "currency", kind: kString, required: true, enum: []string{"BRL"}},
	{name: "due_date", kind: kString, required: true},
	{name: "description", kind: kString, required: true},
	{name: "webhook_url", kind: kString},
	{name: "payer_address", kind: kObject, required: true, fields: payerAddressFields},
}...)

// guideChargeFields is the idempotency guide's illustrative body (nested
// card and payer, amount a decimal string), with the optional members
// earlier payonce versions sent beside it. The guide requires amount,
// currency and type_charge, and a card for card methods.
var guideChargeFields = []field{
	{name: "amount", kind: kString, required: true},
	{name: "currency", kind: kString, required: true, enum: chargeCurrencies},
	{name: "type_charge", kind: kString, required: true, enum: typeChargeEnum},
	{name: "card", kind: kObject, fields: []field{
		{name: "number", kind: kString, required: true},
		{name: "holder_name", kind: kString, required: true},
		{name: "expiration_month", kind: kString, required: true},
		{name: "expiration_year", kind: kString, required: true},
		{name: "cvv", kind: kString, required: true},
	}},
	{name: "payer", kind: kObject, fields: []field{
		{name: "name", kind: kString},
		{name: "email", kind: kString},
		{name: "document", kind: kString},
		{name: "document_type", kind: kString},
	}},
	{name: "wallet_uuid", kind: kString},
	{name: "description", kind: kString},
	{name: "due_date", kind: kString},
	{name: "installment_count", kind: kInteger},
	{name: "capture", kind: kBool},
	{name: "webhook_url", kind: kString},
}

// captureFields is the body of POST /api/v1/bank/wallet/charge/capture/.
var captureFields = []field{
	{name: "charge_uuid", kind: kString, required: true},
	{name: "wallet_uuid", kind: kString, required: true},
	{name: "amount", kind: kNumber},
}

// refundFields and cancelFields are the optional bodies of the path
// forms .../charge/{charge_uuid}/refund|cancel/{wallet_uuid}/.
var (
	refundFields = []field{{name: "amount", kind: kNumber}, {name: "reason", kind: kString}}
	cancelFields = []field{{name: "reason", kind: kString}}
)

// guideMoveFields is the body of the guide's body forms
// /charge/refund/ and /charge/cancel/: the identifiers in the body, an
// amount as a number or a decimal string.
var guideMoveFields = []field{
	{name: "charge_uuid", kind: kString, required: true},
	{name: "wallet_uuid", kind: kString},
	{name: "amount", kind: kAmount},
	{name: "reason", kind: kString},
}

// createWalletFields is the body of POST /api/v1/bank/wallet/.
var createWalletFields = []field{
	{name: "entity_uuid", kind: kString, required: true},
	{name: "customer_id", kind: kString, required: true},
	{name: "currency", kind: kString, required: true, enum: walletCurrencies},
	{name: "name", kind: kString, required: true},
	{name: "email", kind: kString, required: true},
	{name: "create_credentials", kind: kBool, required: true},
	{name: "merchant_uuid", kind: kString},
}

// RequestFields returns the names the fake takes in the body of each
// request, by endpoint name as testdata/a55/reference.json names them
// ("create_charge", ...; "guide_form" for the guide's body), nested
// members as "parent.child". For the tests that hold the fake to that
// list.
func RequestFields() map[string][]string {
	flat := func(fs []field) []string {
		var out []string
		var walk func(prefix string, fs []field)
		walk = func(prefix string, fs []field) {
			for _, f := range fs {
				out = append(out, prefix+f.name)
				walk(prefix+f.name+".", f.fields)
			}
		}
		walk("", fs)
		return out
	}
	return map[string][]string{
		"create_wallet": flat(createWalletFields), "create_charge": flat(createChargeFields),
		"create_pix_charge": flat(createPixFields), "capture_charge": flat(captureFields),
		"refund_charge": flat(refundFields), "cancel_charge": flat(cancelFields), "guide_form": flat(guideChargeFields),
	}
}
