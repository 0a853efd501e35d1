package hostile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/testsupport/keytest"
)

// echoes are what a hostile server puts in every text field of its error
// answers.
var echoes = []string{
	"card 4111 1111 1111 1111 cvv 9173 declined",
	"card 4111-1111-1111-1111 exp 12/30",
	"4111111111111111",
	"５５５５５５５５５５５５４４４４",
	`{"number":"5555 5555 5555 4444","cvv":"9173"}`,
	"cvv: 9173",
	"cvc=9173&amount=1",
	"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.hostile.sig",
	"Bearer eyJhbGciOiJIUzI1NiJ9.hostile.sig",
	"invalid token tok_live_hostile42",
	"access_token=at_hostile_42&client_secret=cs_hostile_42",
	"api_key: ak_hostile_42; secret=sec_hostile_42",
	"GET /api/v1/bank/wallet/charge/?charge_uuid=c1&wallet_uuid=query_hostile_42",
	"see https://evil.test/cb?session=query_hostile_42",
	"13 digits 4222222222222 and 19 digits 6011000990139424123",
	"card %34%31%31%31%31%31%31%31%31%31%31%31%31%31%31%31 declined",
	"body eyJudW1iZXIiOiI0MTExMTExMTExMTExMTExIiwiY3Z2IjoiOTE3MyJ9 refused",
	"body eyJudW1iZXIiOiI0MTExMTExMTExMTExMTExIiwiY3Z2IjoiOTE3MyJ9",
	"pan &#52;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49; cvv &#57;&#49;&#55;&#51;",
	"pan \\064\\061\\061\\061\\061\\061\\061\\061\\061\\061\\061\\061\\061\\061\\061\\061",
	"pan \\u{34}\\u{31}\\u{31}\\u{31}\\u{31}\\u{31}\\u{31}\\u{31}\\u{31}\\u{31}\\u{31}\\u{31}\\u{31}\\u{31}\\u{31}\\u{31}",
	"digits [4,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]",
	"card 4111|1111|1111|1111, 4111:1111:1111:1111, 4111  -  1111  -  1111  -  1111",
	"card ⁴¹¹¹ ¹¹¹¹ ¹¹¹¹ ¹¹¹¹",
	"card NDExMTExMTExMTExMTExMQ== cvv OTE3Mw==",
}

// forbidden are the secrets of echoes; none may be printed anywhere. The
// CVV is looked for with its name: its four digits alone may turn up in a
// printed time or duration.
var forbidden = []string{
	"4111111111111111", "4111 1111 1111", "4111-1111-1111", "5555 5555 5555", "555555555555", "５５５５５５５５",
	"cvv 9173", `"cvv":"9173"`, `cvv\":\"9173`, "cvv: 9173", "cvc=9173", "eyJhbGciOiJIUzI1NiJ9", "hostile.sig", "tok_live_hostile42", "at_hostile_42", "cs_hostile_42",
	"ak_hostile_42", "sec_hostile_42", "query_hostile_42", "charge_uuid=c1", "session=", "422222222",
	"601100099013",
	"%34%31%31%31", "eyJudW1iZXIi", "&#52;&#49;", "\\064\\061", "u{34}", "1,1,1,1,1", "4111|1111", "4111:1111", "4111  -  1111",
	"⁴¹¹¹", "NDExMTExMTEx",
}

type shape struct {
	name   string
	status int
	body   func(echo string) string
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var a55Shapes = []shape{
	{"general", 400, func(e string) string {
		q := jsonString(e)
		return `{"error":{"code":` + q + `,"message":` + q + `,"details":[{"field":` + q + `,"reason":` + q + `,"code":` + q + `}]},"request_id":` + q + `}`
	}},
	{"charge-level 402", 402, func(e string) string {
		q := jsonString(e)
		return `{"charge_uuid":"c1","status":"error","amount":"100.00","message":[{"code":` + q + `,"source":` + q + `,"description":` + q + `},{"code":` + q + `}]}`
	}},
	{"charge-level 200", 200, func(e string) string {
		q := jsonString(e)
		return `{"charge_uuid":"c1","status":"error","amount":"100.00","message":[{"code":` + q + `,"source":` + q + `,"description":` + q + `}]}`
	}},
	{"charge-level message string", 422, func(e string) string {
		return `{"charge_uuid":"c1","status":"error","message":` + jsonString(e) + `}`
	}},
}

var coinepayShapes = []shape{
	{"envelope 400", 400, func(e string) string {
		q := jsonString(e)
		return `{"code":400,"message":` + q + `,"message_key":` + q + `,"data":null,"request_id":` + q + `}`
	}},
	{"envelope 200 with code 402", 200, func(e string) string {
		q := jsonString(e)
		return `{"code":402,"message":` + q + `,"message_key":` + q + `,"data":null,"request_id":` + q + `}`
	}},
}

// syncBuffer is a log sink safe for the client's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// printed is every form of err (and of extra values) a caller may print or
// log: err.Error(), %v, %+v, %s, %q, %d, %#v, and a plain (not
// redacting) slog JSON line.
func printed(err error, extra ...any) string {
	var b strings.Builder
	b.WriteString(err.Error() + "\n")
	for _, verb := range []string{"%v", "%+v", "%s", "%q", "%d", "%#v"} {
		fmt.Fprintf(&b, verb+"\n", err)
		var ae *payonce.APIError
		if errorsAs(err, &ae) {
			if error(ae) != err { // else it is err, printed above
				fmt.Fprintf(&b, verb+"\n", ae)
			}
			fmt.Fprintf(&b, verb+"\n", *ae)
		}
		for _, x := range extra {
			fmt.Fprintf(&b, verb+"\n", x)
		}
	}
	slog.New(slog.NewJSONHandler(&b, nil)).Error("failed", "err", err, "extra", extra)
	return b.String()
}

func assertClean(t *testing.T, what, out string) {
	t.Helper()
	for _, bad := range forbidden {
		assert.NotContains(t, out, bad, "%s leaks %q", what, bad)
	}
}

// caseHeader names, on each request to a caseServer, the case whose
// answer it wants.
const caseHeader = "X-Test-Case"

// caseServer answers each request with the handler of the case its
// caseHeader names: one server, and one client, serve every subtest of a
// test. Cases are all added before the first request.
type caseServer struct {
	names   []string
	answers map[string]http.HandlerFunc
	served  sync.Map // the cases answered
}

func (s *caseServer) add(name string, answer http.HandlerFunc) {
	if s.answers == nil {
		s.answers = map[string]http.HandlerFunc{}
	}
	s.names = append(s.names, name)
	s.answers[name] = answer
}

func (s *caseServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.Header.Get(caseHeader)
	answer, ok := s.answers[name]
	if !ok {
		http.Error(w, "no such case", http.StatusNotFound)
		return
	}
	s.served.Store(name, true)
	answer(w, r)
}

// run runs check for every case, in parallel subtests, each calling with
// the call option that names its case; then it checks that the server
// answered every case (a call that never named one would prove nothing).
func (s *caseServer) run(t *testing.T, check func(t *testing.T, name string, call payonce.CallOption)) {
	t.Helper()
	t.Run("cases", func(t *testing.T) {
		for _, name := range s.names {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				check(t, name, payonce.WithHeader(caseHeader, name))
			})
		}
	})
	for _, name := range s.names {
		_, ok := s.served.Load(name)
		assert.True(t, ok, "case %s was never answered", name)
	}
}

// Every shape of A55 error answer with every echo in each of its texts:
// nothing reaches the error, its printed forms or the client's logs, and
// the key stays readable. One client serves every case; its logs are
// checked once all ran.
func TestA55HostileEchoes(t *testing.T) {
	t.Parallel()
	var cases caseServer
	for _, sh := range a55Shapes {
		for i, echo := range echoes {
			cases.add(fmt.Sprintf("%s/%d", sh.name, i), func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(sh.status)
				_, _ = fmt.Fprint(w, sh.body(echo))
			})
		}
	}
	var logs syncBuffer
	c := a55Hostile(t, cases.ServeHTTP, slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cases.run(t, func(t *testing.T, _ string, call payonce.CallOption) {
		req := cardCharge()
		_, err := c.Charges.Create(t.Context(), req, payonce.WithKey(keytest.Now(t, "hostile-key-0123456789")), call)
		require.Error(t, err)
		var extra []any
		if ch, ok := a55.ChargeFromError(err); ok {
			assertPointersPrintAsValues(t, *ch)
			extra = append(extra, *ch, ch.Messages)
		}
		assertClean(t, "a55 error", printed(err, extra...))
		assert.Contains(t, err.Error(), "hostile-key-0123456789", "the key stays readable")
	})
	assertClean(t, "a55 logs", logs.String())
}

// The same for every shape of Coinepay error answer, the echo in the
// request ID header too.
func TestCoinepayHostileEchoes(t *testing.T) {
	t.Parallel()
	var cases caseServer
	for _, sh := range coinepayShapes {
		for i, echo := range echoes {
			cases.add(fmt.Sprintf("%s/%d", sh.name, i), func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("X-Request-Id", echo) // the request ID header reaches APIError.RequestID
				w.WriteHeader(sh.status)
				_, _ = fmt.Fprint(w, sh.body(echo))
			})
		}
	}
	var logs syncBuffer
	c := coinepayHostile(t, cases.ServeHTTP, payonce.WithLogger(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	cases.run(t, func(t *testing.T, _ string, call payonce.CallOption) {
		_, err := c.Cards.Apply(t.Context(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"},
			payonce.WithKey(keytest.Now(t, "hostile-key-0123456789")), call)
		require.Error(t, err)
		out := printed(err)
		assertClean(t, "coinepay error", out)
		assert.NotContains(t, out, "sk_unit_secret")
	})
	assertClean(t, "coinepay logs", logs.String())
}
