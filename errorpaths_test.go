package payonce_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/errortext"
	"github.com/payonce/payonce/internal/testsupport/keytest"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repeatedPhrase returns the first phrase of three or more words that
// appears twice in s, or "".
func repeatedPhrase(s string) string { return errortext.RepeatedPhrase(s) }

type signFunc func(*http.Request, []byte) error

func (f signFunc) Sign(r *http.Request, b []byte) error { return f(r, b) }

// Every way the client fails (each branch of the operation's failure
// mapping, and each refusal before a byte is sent) says each thing once:
// no phrase of three or more words appears twice in err.Error().
func TestEveryErrorPathSaysEachThingOnce(t *testing.T) {
	status := func(code int) func(int, http.ResponseWriter, *http.Request) {
		return func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(code)
		}
	}
	hangUp := func(_ int, w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	}
	client := func(t *testing.T, answer func(int, http.ResponseWriter, *http.Request), extra ...payonce.Option) (*payonce.Client, *clock) {
		clk := newClock()
		return journalClient(t, newStub(t, answer), nil, clk, extra...), clk
	}
	do := func(c *payonce.Client, ctx context.Context, opts ...payonce.CallOption) error {
		_, err := c.Do(ctx, chargeReq("1.00"), nil, opts...)
		return err
	}
	cases := []struct {
		name string
		kind error
		run  func(t *testing.T) error
	}{
		{"key expired before sending", payonce.ErrKeyExpired, func(t *testing.T) error {
			c, clk := client(t, okCharge)
			return do(c, t.Context(), payonce.WithKey(keytest.Key(t, "order-expired-key-0001", clk.Now().Add(-24*time.Hour))))
		}},
		{"key expired between attempts", payonce.ErrKeyExpired, func(t *testing.T) error {
			var clk *clock
			c, clk := client(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				clk.Advance(24 * time.Hour)
				w.WriteHeader(http.StatusServiceUnavailable)
			})
			return do(c, t.Context())
		}},
		{"budget exhausted", payonce.ErrRetryBudgetExhausted, func(t *testing.T) error {
			c, _ := client(t, status(http.StatusServiceUnavailable), payonce.WithRetryBudget(payonce.NewRetryBudget(1)))
			return do(c, t.Context())
		}},
		{"retries exhausted after 503", payonce.ErrRetriesExhausted, func(t *testing.T) error {
			c, _ := client(t, status(http.StatusServiceUnavailable))
			return do(c, t.Context())
		}},
		{"retries exhausted after 429", payonce.ErrRetriesExhausted, func(t *testing.T) error {
			c, _ := client(t, status(http.StatusTooManyRequests))
			return do(c, t.Context())
		}},
		{"retries exhausted after transport failures", payonce.ErrRetriesExhausted, func(t *testing.T) error {
			c, _ := client(t, hangUp)
			return do(c, t.Context())
		}},
		{"context canceled", context.Canceled, func(t *testing.T) error {
			ctx, cancel := context.WithCancel(t.Context())
			c, _ := client(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				cancel()
				w.WriteHeader(http.StatusServiceUnavailable)
			})
			return do(c, ctx)
		}},
		{"context deadline", context.DeadlineExceeded, func(t *testing.T) error {
			ctx, cancel := context.WithTimeout(t.Context(), time.Nanosecond)
			defer cancel()
			<-ctx.Done()
			c, _ := client(t, okCharge)
			return do(c, ctx)
		}},
		{"refused redirect", payonce.ErrRedirectRefused, func(t *testing.T) error {
			c, _ := client(t, func(_ int, w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "https://elsewhere.example/x", http.StatusTemporaryRedirect)
			})
			return do(c, t.Context())
		}},
		{"unfollowed redirect", payonce.ErrRedirectRefused, func(t *testing.T) error {
			c, _ := client(t, func(_ int, w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/result", http.StatusSeeOther)
			}, payonce.WithHTTPClient(&http.Client{Timeout: time.Second,
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}))
			return do(c, t.Context())
		}},
		{"malformed answer", payonce.ErrMalformedResponse, func(t *testing.T) error {
			c, _ := client(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Length", "9")
				_, _ = io.WriteString(w, `{"id": [}`)
			})
			_, err := c.Do(t.Context(), chargeReq("1.00"), &chargeOut{})
			return err
		}},
		{"signer temporarily unable, retries exhausted", payonce.ErrRetriesExhausted, func(t *testing.T) error {
			c, _ := client(t, okCharge, payonce.WithSigner(signFunc(func(*http.Request, []byte) error {
				return fmt.Errorf("%w: token endpoint down", payonce.ErrSignerTemporary)
			})))
			return do(c, t.Context())
		}},
		{"signer refused", payonce.ErrUnauthorized, func(t *testing.T) error {
			c, _ := client(t, okCharge, payonce.WithSigner(signFunc(func(*http.Request, []byte) error {
				return fmt.Errorf("token endpoint refused the client: %w", payonce.ErrUnauthorized)
			})))
			return do(c, t.Context())
		}},
		{"validation", payonce.ErrInvalidAmount, func(t *testing.T) error {
			c, _ := client(t, okCharge)
			req := chargeReq("1.00")
			req.Validate = func() error {
				_, err := payonce.ParseAmount("1.234")
				return err
			}
			_, err := c.Do(t.Context(), req, nil)
			return err
		}},
		{"key rules", payonce.ErrKeyTooShort, func(t *testing.T) error {
			c, _ := client(t, okCharge)
			return do(c, t.Context(), payonce.WithKey(keytest.Key(t, "k-12345", newClock().Now())))
		}},
		{"journal reserve failure", payonce.ErrJournal, func(t *testing.T) error {
			c, _ := client(t, okCharge, payonce.WithJournal(&failing{Memory: journal.NewMemory(), reserveErr: errors.New("disk full")}))
			return do(c, t.Context(), payonce.WithReference("order-1"))
		}},
		{"journal write failure after a success", payonce.ErrJournal, func(t *testing.T) error {
			c, _ := client(t, okCharge, payonce.WithJournal(&failing{Memory: journal.NewMemory(), updateErr: errors.New("connection lost")}))
			return do(c, t.Context(), payonce.WithReference("order-1"))
		}},
		{"journal write failure after a failure", payonce.ErrJournal, func(t *testing.T) error {
			c, _ := client(t, status(http.StatusServiceUnavailable),
				payonce.WithJournal(&failing{Memory: journal.NewMemory(), updateErr: errors.New("connection lost")}))
			return do(c, t.Context(), payonce.WithReference("order-1"))
		}},
		{"journal recorded failure", payonce.ErrInvalidRequest, func(t *testing.T) error {
			c, _ := client(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusUnprocessableEntity)
				_, _ = io.WriteString(w, `{"error":{"code":"VALIDATION_ERROR","message":"amount invalid"}}`)
			}, payonce.WithJournal(journal.NewMemory()))
			_ = do(c, t.Context(), payonce.WithReference("order-1"))
			return do(c, t.Context(), payonce.WithReference("order-1"))
		}},
		{"outcome unknown", payonce.ErrOutcomeUnknown, func(t *testing.T) error {
			c, clk := client(t, status(http.StatusBadGateway), payonce.WithJournal(journal.NewMemory()))
			_ = do(c, t.Context(), payonce.WithReference("order-1"))
			clk.Advance(23*time.Hour + 30*time.Minute)
			return do(c, t.Context(), payonce.WithReference("order-1"))
		}},
		{"nil request", payonce.ErrInvalidRequest, func(t *testing.T) error {
			c, _ := client(t, okCharge)
			_, err := c.Do(t.Context(), nil, nil)
			return err
		}},
		{"bad call option", payonce.ErrInvalidRequest, func(t *testing.T) error {
			c, _ := client(t, okCharge)
			return do(c, t.Context(), payonce.WithHeader("Host", "x"))
		}},
		{"bad call policy", payonce.ErrInvalidConfig, func(t *testing.T) error {
			c, _ := client(t, okCharge)
			return do(c, t.Context(), payonce.WithCallRetryPolicy(payonce.RetryPolicy{}))
		}},
		{"zero key", payonce.ErrKeyRequired, func(t *testing.T) error {
			c, _ := client(t, okCharge)
			k, _ := payonce.ParseKey("not-a-key")
			return do(c, t.Context(), payonce.WithKey(k))
		}},
		{"server error answer", payonce.ErrInvalidRequest, func(t *testing.T) error {
			c, _ := client(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = io.WriteString(w, `{"error":{"code":"INVALID_REQUEST","message":"invalid request"}}`)
			})
			return do(c, t.Context())
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run(t)
			require.Error(t, err)
			var ae *payonce.APIError
			require.ErrorAs(t, err, &ae, "%v", err)
			if tc.kind != nil {
				assert.ErrorIs(t, err, tc.kind, "%v", err)
			}
			assert.Empty(t, repeatedPhrase(err.Error()), "%s", err.Error())
			if !ae.Key.IsZero() {
				assert.Equal(t, 1, strings.Count(err.Error(), ae.Key.String()), "the key is named once: %s", err.Error())
			}
		})
	}
}
