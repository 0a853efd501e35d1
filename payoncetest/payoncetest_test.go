package payoncetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/internal/testsupport/retrytest"
	"github.com/payonce/payonce/payoncetest"
)

// provider is a fake under test: what every fake shares is tested on each.
type provider struct {
	name string
	path string // the path of the operation running's op and send make
	kind string // its kind in the ledger
	// body and otherBody are two payloads of that operation, for send.
	body, otherBody string
	conflict        string // the error code of a key reused with another payload
	// start runs a fake with opts; nil when an option was refused.
	start func(tb testing.TB, opts ...payoncetest.Option) *running
}

// running is a started fake under test.
type running struct {
	*payoncetest.Fake
	url string
	// op makes one operation through the fake's SDK client (with copts)
	// and returns the resource's ID and the attempts it took.
	op func(copts ...payonce.Option) (string, int, error)
	// send posts body to path under key through the fake's HTTPClient.
	send func(t testing.TB, key, body string) answer
	// spent returns what n operations cost the merchant, as the fake's
	// balance shows it; nil where the fake keeps none.
	spent func(n int) (want, got string)
}

// answer is what send got: the status, the resource's ID on success,
// the provider's error code on failure.
type answer struct {
	status   int
	id, code string
	raw      []byte
}

// post sends body to url under key through c and reads the answer's JSON.
func post(t testing.TB, c *http.Client, url, key, body string) (int, []byte, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(corekit.HeaderIdempotencyKey, key)
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, json.Unmarshal(raw, &v), "%s", raw)
	return resp.StatusCode, raw, v
}

// a55Card is an A55 card charge of amount that confirms.
func a55Card(amount string) string {
	return `{"amount":"` + amount + `","currency":"BRL","type_charge":"credit_card","card":{"number":"` + a55test.CardConfirms +
		`","holder_name":"TEST","expiration_month":"12","expiration_year":"2099","cvv":"123"}}`
}

var providers = []provider{
	{name: "a55test", path: a55test.ChargePath, kind: "charge.create",
		body: a55Card("100.00"), otherBody: a55Card("5.00"), conflict: "IDEMPOTENCY_KEY_CONFLICT",
		start: func(tb testing.TB, opts ...payoncetest.Option) *running {
			srv := a55test.New(tb, opts...)
			if srv == nil {
				return nil
			}
			return &running{Fake: srv.Fake, url: srv.URL,
				op: sdkOp(tb, srv.Client, func(ctx context.Context, c *a55.Client) (string, int, error) {
					amount, _ := payonce.ParseAmount("100.00")
					ch, err := c.Charges.Create(ctx, a55test.Complete(&a55.ChargeCreateRequest{InstallmentValue: amount, Currency: payonce.BRL,
						TypeCharge: a55.TypeCreditCard, Card: &payonce.Card{Number: a55test.CardConfirms, HolderName: "TEST",
							ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"}}))
					if err != nil {
						return "", 0, err
					}
					return ch.UUID, ch.Meta.Attempts, nil
				}),
				send: func(t testing.TB, key, body string) answer {
					status, raw, v := post(t, srv.HTTPClient(), srv.URL+a55test.ChargePath, key, body)
					a := answer{status: status, raw: raw}
					a.id, _ = v["charge_uuid"].(string)
					if e, ok := v["error"].(map[string]any); ok {
						a.code, _ = e["code"].(string)
					}
					return a
				},
			}
		}},
	{name: "coinepaytest", path: coinepay.PathCardApply, kind: "card.apply",
		body: `{"header_id":"h1","package_id":"p1"}`, otherBody: `{"header_id":"h9","package_id":"p9"}`,
		conflict: "openapi_idempotency_key_conflict",
		start: func(tb testing.TB, opts ...payoncetest.Option) *running {
			srv := coinepaytest.New(tb, opts...)
			if srv == nil {
				return nil
			}
			return &running{Fake: srv.Fake, url: srv.URL,
				op: sdkOp(tb, srv.Client, func(ctx context.Context, c *coinepay.Client) (string, int, error) {
					res, err := c.Cards.Apply(ctx, &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"})
					if err != nil {
						return "", 0, err
					}
					return res.CardID, res.Meta.Attempts, nil
				}),
				send: func(t testing.TB, key, body string) answer {
					status, raw, v := post(t, srv.HTTPClient(), srv.URL+coinepay.PathCardApply, key, body)
					a := answer{status: status, raw: raw}
					a.code, _ = v["message_key"].(string)
					if d, ok := v["data"].(map[string]any); ok {
						a.id, _ = d["card_id"].(string)
					}
					return a
				},
				spent: func(n int) (want, got string) {
					// A card costs 1.00 of the 1000.00 a fake starts with.
					return fmt.Sprintf("%d.00", 1000-n), srv.Balance(srv.APIKey()).String()
				},
			}
		}},
}

// sdkOp makes running.op of a Server's Client and an operation on such a
// client.
func sdkOp[C any](tb testing.TB, client func(...payonce.Option) (C, error),
	op func(context.Context, C) (string, int, error)) func(...payonce.Option) (string, int, error) {
	return func(copts ...payonce.Option) (string, int, error) {
		c, err := client(copts...)
		if err != nil {
			return "", 0, err
		}
		return op(tb.Context(), c)
	}
}

// forEach runs test once per provider, as a subtest named after it.
func forEach(t *testing.T, test func(t *testing.T, p provider)) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) { test(t, p) })
	}
}

// Fakes created with default settings draw their IDs at random: the first
// resource of two servers never has the same ID. WithSeed makes a run
// reproducible.
func TestServersDrawDistinctIDsUnlessSeeded(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		first := func(opts ...payoncetest.Option) string {
			id, _, err := p.start(t, opts...).op()
			require.NoError(t, err)
			return id
		}
		assert.NotEqual(t, first(), first(), "default fakes share their first ID")
		assert.Equal(t, first(payoncetest.WithSeed(11)), first(payoncetest.WithSeed(11)))
	})
}

// The test client retries on millisecond waits by default: a 429 asking for
// a second is retried after FastRetryPolicy's 20 ms cap; the caller's
// policy still wins. The wait is the one the client's observer saw it
// choose, so nothing depends on the machine's speed.
func TestClientRetriesFastByDefault(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		wait := func(t *testing.T, opts ...payonce.Option) time.Duration {
			f := p.start(t)
			waits, observe := retrytest.New()
			require.NoError(t, f.AddFault(payoncetest.Rule{Fault: payoncetest.FaultRateLimit, Path: p.path, RetryAfter: 1, Count: 1}))
			_, attempts, err := f.op(append([]payonce.Option{observe}, opts...)...)
			require.NoError(t, err)
			require.Equal(t, 2, attempts)
			all := waits.All()
			require.Len(t, all, 1, "one retry")
			return all[0]
		}
		assert.Equal(t, 20*time.Millisecond, wait(t), "Retry-After capped by FastRetryPolicy")
		assert.Equal(t, time.Second, wait(t, payonce.WithRetryPolicy(payonce.DefaultRetryPolicy())), "the caller's policy wins")
	})
}

func TestConsoleURLServesTheConsole(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		f := p.start(t)
		resp, err := http.Get(f.ConsoleURL())
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, resp.Header.Get("Content-Type"), "text/html")
		assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'")
		assert.Equal(t, f.url+"/_fakepay/", f.ConsoleURL())
	})
}

// failedTB is a test that has failed: its cleanups run when the test
// says, so a held fake can be watched from outside.
type failedTB struct {
	testing.TB
	cleanups []func()
}

func (f *failedTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *failedTB) Failed() bool      { return true }
func (f *failedTB) Log(...any)        {}

// fatalTB turns Fatalf into a panic the test can see.
type fatalTB struct{ *failedTB }

func (f *fatalTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (f *fatalTB) Helper()                           {}

// deadlineTB is a failed test whose binary must end by deadline (go
// test -timeout), and whose log is kept.
type deadlineTB struct {
	*failedTB
	deadline time.Time
	logs     []string
}

func (d *deadlineTB) Deadline() (time.Time, bool) { return d.deadline, !d.deadline.IsZero() }
func (d *deadlineTB) Log(args ...any)             { d.logs = append(d.logs, fmt.Sprint(args...)) }

// runCleanups runs tb's cleanups, last first, and closes the channel it
// returns when they are done.
func runCleanups(tb *failedTB) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := len(tb.cleanups) - 1; i >= 0; i-- {
			tb.cleanups[i]()
		}
	}()
	return done
}

// runCleanupsUnheld runs tb's cleanups and fails t when they are still
// waiting after a minute: a fake held when it must not be.
func runCleanupsUnheld(t *testing.T, tb *failedTB) {
	t.Helper()
	select {
	case <-runCleanups(tb):
	case <-time.After(time.Minute):
		t.Fatal("the failed test's fake is held")
	}
}

func TestHoldOnFailureKeepsTheFakeUpUntilReleased(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		t.Run("option", func(t *testing.T) {
			t.Setenv("CI", "")
			t.Setenv("PAYONCE_FAKE_HOLD", "")
			testHeldUntilReleased(t, p, payoncetest.WithHoldOnFailure(time.Hour))
		})
		t.Run("environment on CI", func(t *testing.T) {
			t.Setenv("CI", "true") // asked for in this run: held on CI too
			t.Setenv("PAYONCE_FAKE_HOLD", "1h")
			testHeldUntilReleased(t, p)
		})
		t.Setenv("PAYONCE_FAKE_HOLD", "soon")
		bad := &failedTB{TB: t}
		assert.Panics(t, func() { p.start(&fatalTB{failedTB: bad}) }, "an invalid hold fails the test")
	})
}

func testHeldUntilReleased(t *testing.T, p provider, opts ...payoncetest.Option) {
	tb := &failedTB{TB: t}
	f := p.start(tb, opts...)
	done := runCleanups(tb)
	resp, err := http.Get(f.ConsoleURL())
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), "release-btn", "a held fake's console offers Release")
	select {
	case <-done:
		t.Fatal("the failed test's fake closed while held")
	default:
	}
	resp, err = http.Post(f.url+"/_fakepay/release", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	<-done
	_, err = http.Get(f.ConsoleURL())
	assert.Error(t, err, "released: the fake is closed")
}

func TestHoldOnFailureEndsBeforeTheTestTimeout(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		t.Setenv("CI", "")
		t.Setenv("PAYONCE_FAKE_HOLD", "")
		// Past the binary's deadline go test panics and the failed test's own
		// messages are never printed: the hold must not reach it.
		tb := &deadlineTB{failedTB: &failedTB{TB: t}, deadline: time.Now().Add(time.Second)}
		f := p.start(tb, payoncetest.WithHoldOnFailure(time.Hour))
		runCleanupsUnheld(t, tb.failedTB)
		_, err := http.Get(f.ConsoleURL())
		assert.Error(t, err, "the fake is closed")
		assert.Contains(t, strings.Join(tb.logs, "\n"), "-timeout", "the log says why it was not held")
		assert.Contains(t, strings.Join(tb.logs, "\n"), p.name+": ", "the log names the test package")
	})
}

func TestHoldOnFailureOptionDoesNotHoldOnCI(t *testing.T) {
	forEach(t, func(t *testing.T, p provider) {
		t.Setenv("CI", "true")
		t.Setenv("PAYONCE_FAKE_HOLD", "")
		tb := &deadlineTB{failedTB: &failedTB{TB: t}}
		f := p.start(tb, payoncetest.WithHoldOnFailure(time.Hour))
		runCleanupsUnheld(t, tb.failedTB)
		_, err := http.Get(f.ConsoleURL())
		assert.Error(t, err, "the fake is closed")
		assert.Contains(t, strings.Join(tb.logs, "\n"), "CI", "the log says why it was not held")
	})
}
