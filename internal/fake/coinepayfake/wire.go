package coinepayfake

import "github.com/payonce/payonce/internal/fake/fakeserver"

// The fake's own names on Coinepay's wire: what it reads from requests and
// the message_keys it answers. They are spelled out here rather than taken
// from the client; testdata/coinepay/reference.json lists the names both
// sides use, and each side's tests hold it to that list.

// applyRequest is the body of card/apply.
type applyRequest struct {
	HeaderID  string `json:"header_id"`
	PackageID string `json:"package_id"`
}

// rechargeRequest is the body of card/recharge.
type rechargeRequest struct {
	CardID string              `json:"card_id"`
	Amount *fakeserver.Decimal `json:"amount"`
}

// Query parameters of card/info and card/list.
const (
	queryCardID   = "card_id"
	queryPage     = "page"
	queryPageSize = "page_size"
)

// Message keys the card API answers beside the engine's problems
// (problemKey) and the signature failures (Code*).
const (
	KeySuccess             = "success"
	KeyInvalidRequest      = "openapi_invalid_request"
	KeyInsufficientBalance = "insufficient_balance"
	KeyPackageNotFound     = "openapi_package_not_found"
	KeyNotFound            = "openapi_not_found"
)
