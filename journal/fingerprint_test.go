package journal_test

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/payoncetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bodyTap records the body of every request sent through it.
type bodyTap struct {
	base http.RoundTripper
	mu   sync.Mutex
	sent []sentRequest
}

type sentRequest struct {
	method, path string
	body         []byte
}

func (b *bodyTap) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Method == http.MethodPost {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		_ = r.Body.Close()
		b.mu.Lock()
		b.sent = append(b.sent, sentRequest{r.Method, r.URL.Path, body})
		b.mu.Unlock()
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return b.base.RoundTrip(r)
}

// unkeyedHashes returns, for every value a reader of the rows could hash
// to test a guess (each card field, the card fields together, each body
// sent and method, path and body in the usual framings), its digests under the
// common unkeyed hashes, in the encodings a row may hold them: hex, upper
// hex, base64 (four alphabets) and the raw bytes, each cut to its first 16
// characters (8 raw bytes) so that a truncated digest is caught too.
func unkeyedHashes(cards [][2]string, sent []sentRequest) map[string]string {
	var inputs []string
	for _, c := range cards {
		inputs = append(inputs, c[0], c[1], c[0]+c[1], c[1]+c[0], c[0]+"\x00"+c[1], c[0]+"|"+c[1], c[0]+":"+c[1])
	}
	for _, s := range sent {
		m, p, b := s.method, s.path, string(s.body)
		inputs = append(inputs, b, m+"\x00"+p+"\x00"+b, m+p+b, m+" "+p+"\n"+b, m+"\n"+p+"\n"+b, m+" "+p+" "+b, p+b)
	}
	hashes := map[string]func() hash.Hash{"md5": md5.New, "sha1": sha1.New, "sha224": sha256.New224, "sha256": sha256.New,
		"sha384": sha512.New384, "sha512": sha512.New}
	out := map[string]string{}
	for _, in := range inputs {
		for name, h := range hashes {
			d := h()
			d.Write([]byte(in))
			sum := d.Sum(nil)
			label := fmt.Sprintf("%s(%.40q)", name, in)
			out[hex.EncodeToString(sum)[:16]] = label + " hex"
			out[strings.ToUpper(hex.EncodeToString(sum))[:16]] = label + " HEX"
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
				out[enc.EncodeToString(sum)[:16]] = label + " base64"
			}
			out[string(sum[:8])] = label + " raw"
		}
	}
	return out
}

// No row of any backend, in any column, holds a value derived from a card
// number or a CVV by an unkeyed hash: not the stored fingerprint, not what
// payonce.JournalEntryOf gives back, for a client keyed by its credential
// secret, for one with an access token (no secret to key with), and for a
// core client sending a card.
func TestNoRowHoldsAnUnkeyedHashOfCardData(t *testing.T) {
	cards := [][2]string{{"4111111111111111", "987"}, {a55test.CardDeclined, "654"}, {"5555555555554444", "321"}}
	charge := func(c [2]string) *a55.ChargeCreateRequest {
		r := chargeRequest(c[0])
		r.Card.CVV = payonce.CVV(c[1])
		return r
	}
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			j, _ := b.open(t)
			ctx := t.Context()
			srv := a55test.New(t)
			tap := &bodyTap{base: srv.HTTPClient().Transport}
			hc := &http.Client{Transport: tap, Timeout: time.Minute}

			c := a55Client(t, srv, j, payonce.WithHTTPClient(hc))
			_, err := c.Charges.Create(ctx, charge(cards[0]), payonce.WithReference("fp-ok"))
			require.NoError(t, err)
			_, err = c.Charges.Create(ctx, charge(cards[1]), payonce.WithReference("fp-declined"))
			require.ErrorIs(t, err, a55.ErrCardDeclined)
			one := payoncetest.FastRetryPolicy()
			one.MaxAttempts = 1
			lossy := a55Client(t, srv, j, payonce.WithHTTPClient(hc), payonce.WithRetryPolicy(one))
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55.PathChargeList, Count: 1}))
			_, err = lossy.Charges.Create(ctx, charge(cards[2]), payonce.WithReference("fp-lost"))
			require.Error(t, err)

			tok, err := a55.NewClient(a55.AccessToken(srv.IssueToken()), payonce.WithBaseURL(srv.URL), payonce.WithHTTPClient(hc),
				payoncetest.ClientClock(srv.Clock().Now), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()), payonce.WithJournal(j),
				payonce.WithScope("fp-token"))
			require.NoError(t, err)
			tok = tok.WithAccount(srv.Account())
			_, err = tok.Charges.Create(ctx, charge(cards[0]), payonce.WithReference("fp-token-ok"))
			require.NoError(t, err)

			core, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithHTTPClient(hc), payonce.WithJournal(j),
				payonce.WithScope("fp-core"), payonce.WithProvider(payonce.Provider{KeyRules: payonce.KeyRules{Provider: "a55", MinLen: 16, MaxLen: 128, Window: payonce.DefaultKeyWindow}}), payoncetest.ClientClock(srv.Clock().Now),
				payonce.WithSigner(corekit.SignerFunc(func(r *http.Request, _ []byte) error {
					r.Header.Set("Authorization", "Bearer "+srv.IssueToken())
					return nil
				})))
			require.NoError(t, err)
			bare := charge(cards[0]) // the core client has no account: the body names it
			bare.WalletUUID, bare.MerchantID = srv.WalletUUID(), srv.MerchantID()
			_, err = core.Do(ctx, &payonce.Request{Operation: "charges.create", Method: http.MethodPost, Path: a55.PathCharges,
				Body: bare, Keyed: true}, nil, payonce.WithReference("fp-core-ok"))
			require.NoError(t, err)

			srv.Clock().Advance(25 * time.Hour) // the lost charge's key is past the window
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55.PathChargeList, Count: 1}))
			_, err = lossy.Charges.Create(ctx, charge(cards[2]), payonce.WithReference("fp-lost"))
			require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
			entry, ok := payonce.JournalEntryOf(err)
			require.True(t, ok)

			dump := b.dump(t, j) + fmt.Sprintf("\n%#v\n%v\n%+v\n", entry, entry, err)
			for _, ref := range []string{"fp-ok", "fp-declined", "fp-lost", "fp-token-ok", "fp-core-ok"} {
				require.Contains(t, dump, ref)
			}
			tap.mu.Lock()
			sent := tap.sent
			tap.mu.Unlock()
			require.GreaterOrEqual(t, len(sent), 5)
			for needle, what := range unkeyedHashes(cards, sent) {
				assert.NotContains(t, dump, needle, "a row holds %s", what)
			}
		})
	}
}
