package a55

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/payonce/payonce"
)

// maxID bounds an identifier A55 hands out (a merchant, a wallet, a
// charge): at most this many bytes.
const maxID = 128

// Account is the merchant and the wallet a request acts for when it names
// none itself: A55 requires both on every charge (merchant_id and
// wallet_uuid), and the wallet on every capture, refund, cancel, get and
// list. IDs are A55's opaque strings (a UUID, or "wal_…" as the
// quickstart's wallet).
type Account struct {
	MerchantID string // merchant_id (also merchant_uuid on A55's pages)
	WalletUUID string // wallet_uuid
}

// WithAccount returns a client that acts for a when a request names no
// merchant or wallet of its own. It shares c's core, so its retry budget,
// limiter, token cache and journal; c is unchanged. The IDs are checked
// when a request uses them, before anything is sent.
//
//	shop := client.WithAccount(a55.Account{MerchantID: merchantID, WalletUUID: walletUUID})
//	ch, err := shop.Charges.Create(ctx, req, payonce.WithReference("order-42/attempt-1"))
func (c *Client) WithAccount(a Account) *Client {
	nc := *c
	nc.account = a
	nc.Wallets = &WalletsService{c: &nc}
	nc.Charges = &ChargesService{c: &nc}
	return &nc
}

// Account returns the account of the client (WithAccount), zero when it
// has none.
func (c *Client) Account() Account { return c.account }

// walletOr is v, else the account's wallet.
func (c *Client) walletOr(v string) string {
	if v != "" {
		return v
	}
	return c.account.WalletUUID
}

// merchantOr is v, else the account's merchant.
func (c *Client) merchantOr(v string) string {
	if v != "" {
		return v
	}
	return c.account.MerchantID
}

// invalid is the refusal of field: a *payonce.ValidationError of kind
// ErrInvalidRequest.
func invalid(field, reason string) error {
	return &payonce.ValidationError{Field: field, Reason: reason, Err: payonce.ErrInvalidRequest}
}

// checkID checks an identifier: present, printable, no whitespace, at
// most maxID bytes; one that goes in a path (inPath) may also hold no
// '/', '?', '#', '%' and no "..", whatever escaping would make of them,
// and may not be ".". The refusal names field and says where a missing one comes from.
func checkID(field, v string, inPath bool) error {
	switch {
	case v == "":
		return invalid(field, "required: set it on the request or on the client (WithAccount)")
	case len(v) > maxID:
		return invalid(field, "longer than 128 bytes")
	case !printableNoSpace(v):
		return invalid(field, "must be printable, without spaces")
	case inPath && (strings.ContainsAny(v, "/?#%\\") || strings.Contains(v, "..") || v == "."):
		// "." and ".." are dot segments, resolved away on the way: the
		// request would reach another endpoint.
		return invalid(field, "must not hold /, ?, #, %, \\ or .., nor be .")
	}
	return nil
}

// checkRequiredID is checkID for an identifier that has no account
// default (a charge's UUID).
func checkRequiredID(field, v string, inPath bool) error {
	if v == "" {
		return invalid(field, "required")
	}
	return checkID(field, v, inPath)
}

// printableNoSpace reports whether v is valid UTF-8 of printable
// characters and no whitespace.
func printableNoSpace(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= utf8.RuneSelf {
			rest := v[i:]
			return utf8.ValidString(rest) && strings.IndexFunc(rest, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) < 0
		}
		if c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}
