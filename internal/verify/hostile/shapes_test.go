package hostile

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/payonce/payonce/payoncetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/internal/testsupport/keytest"
)

const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtZXJjaGFudCJ9.c2lnbmF0dXJlX2hvc3RpbGU"

// moreEchoes are card numbers and tokens in the shapes a template, an
// encoder or a hostile server may give them.
var moreEchoes = []string{
	"card 4111.1111.1111.1111 refused",
	"card 4111/1111/1111/1111 refused",
	"card 4111_1111_1111_1111 refused",
	"card 4\u200b111\u200b1111\u200b1111\u200b1111 refused",
	"card 4111\t1111\n1111\u30001111 refused",
	"card 4111-1111-1111-1111x refused",
	"card:4111 1111 1111 1111abc",
	"session " + jwt,
	`{"jwt":"` + jwt + `"}`,
	strings.Repeat("padding ", 700) + "card 4111 1111 1111 1111 " + strings.Repeat("x", 9000),
}

var moreForbidden = []string{"4111.1111", "4111/1111", "4111_1111", "1111\u200b1111", "4111\t1111", "4111-1111",
	"4111 1111", "eyJhbGciOiJIUzI1NiJ9", "c2lnbmF0dXJlX2hvc3RpbGU", "tok_header_42", "41111111"}

// Every new shape through the real a55 client, in the body and in the
// headers a client reads (X-Request-Id, Retry-After, Location, Date):
// nothing reaches the error, its JSON form, the printed request or a
// log line; the key stays readable.
func TestA55HostileShapes(t *testing.T) {
	t.Parallel()
	for i, echo := range moreEchoes {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			var logs syncBuffer
			c := a55Hostile(t, func(w http.ResponseWriter, r *http.Request) {
				h := w.Header()
				h.Set("Content-Type", "application/json")
				h.Set("X-Request-Id", echo+" token tok_header_42")
				h.Set("Retry-After", echo)
				h.Set("Location", "https://evil.test/"+echo+"?tok_header_42")
				h.Set("Date", echo)
				w.WriteHeader(400)
				q := jsonString(echo)
				_, _ = fmt.Fprint(w, `{"error":{"code":`+q+`,"message":`+q+`,"details":[{"field":`+q+`,"reason":`+q+`}]}}`)
			}, slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			req := cardCharge()
			key := "order-20261129-0001-000123"
			_, err := c.Charges.Create(t.Context(), req, payonce.WithKey(keytest.Now(t, key)))
			require.Error(t, err)
			out := printed(err)
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%q", "%x", "%t"} {
				out += fmt.Sprintf(verb, req) + fmt.Sprintf(verb, *req)
			}
			j, jerr := json.Marshal(err)
			require.NoError(t, jerr)
			out += string(j)
			var merchant strings.Builder // what a merchant's own logger writes
			slog.New(slog.NewJSONHandler(&merchant, nil)).Info("charge", slog.Any("req", req), slog.Any("req2", *req), slog.Any("err", err))
			slog.New(slog.NewTextHandler(&merchant, nil)).WithGroup("g").Info("charge", slog.Any("req", req), slog.Any("err", err))
			out += merchant.String()
			for _, bad := range append(moreForbidden, "9173\"", "client-secret-value") {
				if !assert.NotContains(t, out+logs.String(), bad) {
					i := strings.Index(out+logs.String(), bad)
					t.Logf("around: %q", (out + logs.String())[max(0, i-200):i+50])
				}
			}
			assert.Contains(t, err.Error(), key, "the key stays readable")
			assert.Less(t, len(err.Error()), 10000)
		})
	}
}

// a55Hostile is a real a55 client, logging through h, against a server
// whose token endpoint works and whose charge endpoint is answer.
func a55Hostile(t *testing.T, answer http.HandlerFunc, h slog.Handler) *a55.Client {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /oauth2/token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprint(w, `{"access_token":"tok-a","expires_in":3600,"token_type":"Bearer"}`)
	})
	mux.HandleFunc("POST "+a55.PathCharges, answer)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	auth := a55.ClientCredentials("id", "client-secret-value")
	auth.TokenURL = srv.URL + "/oauth2/token"
	c, err := a55.NewClient(auth, payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()),
		payonce.WithLogger(slog.New(h)))
	require.NoError(t, err)
	return c
}

// cardCharge is a card charge whose number and CVV no output may show,
// into a wallet the hostile servers take as any other.
func cardCharge() *a55.ChargeCreateRequest {
	return a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: payoncetest.Amount("100.00"), Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard,
		WalletUUID: "f47ac10b-58cc-4372-a567-0e02b2c3d479", MerchantID: "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
		Card: &payonce.Card{Number: "4111111111111111", HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "9173"}})
}
