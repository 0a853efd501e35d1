package a55

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/redactprint"
)

// Wallet is an A55 wallet; wallets hold charges.
type Wallet struct {
	UUID         string           `json:"wallet_uuid"`
	Name         string           `json:"name,omitempty"`
	Email        string           `json:"email,omitempty"`
	Document     string           `json:"document,omitempty"`
	DocumentType string           `json:"document_type,omitempty"`
	Currency     payonce.Currency `json:"currency,omitempty"`
	Status       string           `json:"status,omitempty"`
	CreatedAt    time.Time        `json:"created_at,omitzero"`

	// Meta describes the call that returned the wallet.
	Meta ResponseMeta `json:"-"`
}

// WalletsService creates wallets (https://docs.a55.tech, Wallets).
type WalletsService struct{ c *Client }

// WalletCreateRequest is the body of POST /api/v1/bank/wallet/.
type WalletCreateRequest struct {
	Name         string           `json:"name"`
	Email        string           `json:"email,omitempty"`
	Document     string           `json:"document,omitempty"`
	DocumentType string           `json:"document_type,omitempty"`
	Currency     payonce.Currency `json:"currency,omitempty"`
}

func (r *WalletCreateRequest) validate() error {
	if r == nil {
		return &payonce.ValidationError{Reason: "nil request", Err: payonce.ErrInvalidRequest}
	}
	if strings.TrimSpace(r.Name) == "" {
		return &payonce.ValidationError{Field: "name", Reason: "required", Err: payonce.ErrInvalidRequest}
	}
	if r.Currency != "" {
		return validateCurrency(r.Currency)
	}
	return nil
}

// Create creates a wallet: POST /api/v1/bank/wallet/, one operation under
// one Idempotency-Key (payonce.WithKey, else a new UUID v4), however many
// attempts it takes.
func (s *WalletsService) Create(ctx context.Context, req *WalletCreateRequest, opts ...payonce.CallOption) (*Wallet, error) {
	w := new(Wallet)
	meta, err := s.c.do(ctx, &payonce.Request{
		Operation: "wallets.create", Method: http.MethodPost, Path: PathWallets, Route: PathWallets,
		Body: req, Keyed: true, Validate: req.validate,
	}, w, opts)
	if err != nil {
		return nil, err
	}
	w.Meta = meta
	return w, nil
}

// walletFields is Wallet without its printing methods.
type walletFields Wallet

// Format prints the wallet as Charge.Format prints a charge: every text
// the server sent redacted, under every verb.
func (w Wallet) Format(f fmt.State, verb rune) {
	redactprint.Format(f, verb, walletFields(w), "a55.Wallet")
}

// LogValue is the slog form, texts redacted.
func (w Wallet) LogValue() slog.Value { return redactprint.LogValue(walletFields(w)) }
