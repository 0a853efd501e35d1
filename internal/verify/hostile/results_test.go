package hostile

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/payonce/payonce/payoncetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/testsupport/keytest"
)

// allForms is every printed form of vals a caller may write: each value
// under every verb, in a slice and in a map, and a plain slog JSON and
// text line of the value. (slog's JSON handler encodes a slice of results
// as JSON, without their LogValue: docs/security.md says so, as for a
// card.) The slice and the map are printed under %v alone: fmt hands an
// element to the element's own methods with the verb and flags the
// container was printed with, so under another verb they show what the
// value shows under it.
func allForms(vals ...any) string {
	var b strings.Builder
	for _, v := range vals {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
			fmt.Fprintf(&b, verb+"\n", v)
		}
		fmt.Fprintf(&b, "%v\n%v\n", []any{v}, map[string]any{"v": v})
		slog.New(slog.NewJSONHandler(&b, nil)).Info("result", "v", v)
		slog.New(slog.NewTextHandler(&b, nil)).Info("result", "v", v)
	}
	return b.String()
}

// printingMethods are the methods fmt, slog and encoding/json print a
// value through.
var printingMethods = []string{"Format", "String", "GoString", "Error", "LogValue", "MarshalJSON", "MarshalText"}

// assertPointersPrintAsValues checks that the type of each of vals has
// every printing method its pointer type has. The pointer's methods are
// then the value's own (a method of a value receiver is one of the
// pointer too, and a type cannot declare one name on both), so a pointer
// prints and logs exactly as the value it points to: allForms of the
// value covers the pointer.
func assertPointersPrintAsValues(t *testing.T, vals ...any) {
	t.Helper()
	for _, v := range vals {
		typ := reflect.TypeOf(v)
		for _, m := range printingMethods {
			_, onPointer := reflect.PointerTo(typ).MethodByName(m)
			_, onValue := typ.MethodByName(m)
			assert.Equal(t, onPointer, onValue, "*%s has %s and %s has not: a pointer prints otherwise", typ, m, typ)
		}
	}
}

// echoGroups runs check once for each group of five echoes: a group puts
// its five in different fields of one answer, so every echo is covered in
// five runs, not 25.
func echoGroups(t *testing.T, check func(t *testing.T, e1, e2, e3, e4, e5 string)) {
	for i := 0; i < len(echoes); i += 5 {
		at := func(j int) string { return echoes[(i+j)%len(echoes)] }
		t.Run(fmt.Sprintf("echoes %d-%d", i, i+4), func(t *testing.T) {
			t.Parallel()
			check(t, at(0), at(1), at(2), at(3), at(4))
		})
	}
}

// A server may echo card data, tokens or query strings in any text of a
// successful answer, not only in its errors: in an ID, a status, a
// description, a payer, an unmodeled field. No printed or logged result
// shows it, and the header it set is no more visible through a result's
// JSON form than through its Meta.
func TestA55ResultsHideWhatASuccessEchoes(t *testing.T) {
	t.Parallel()
	echoGroups(t, func(t *testing.T, e1, e2, e3, e4, e5 string) {
		q1, q2, q3, q4, q5 := jsonString(e1), jsonString(e2), jsonString(e3), jsonString(e4), jsonString(e5)
		c := a55Hostile(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Echo", e5)
			_, _ = fmt.Fprint(w, `{"charge_uuid":`+q1+`,"wallet_uuid":`+q2+`,"status":`+q3+`,"amount":"100.00","description":`+q4+
				`,"due_date":`+q5+`,"idempotency_key":`+q1+`,"payer":{"name":`+q2+`,"email":`+q3+`,"document":`+q4+`}}`)
		}, slog.DiscardHandler)
		ch, err := c.Charges.Create(t.Context(), cardCharge(), payonce.WithKey(keytest.Now(t, "hostile-key-0123456789")))
		require.NoError(t, err)
		page := a55.ChargePage{Charges: []*a55.Charge{ch}}
		assertPointersPrintAsValues(t, *ch, page)
		assertClean(t, "a55 charge", allForms(*ch, page))
	})
}

func TestWebhookAndCoinepayResultsHideWhatASuccessEchoes(t *testing.T) {
	t.Parallel()
	echoGroups(t, func(t *testing.T, e1, e2, e3, e4, e5 string) {
		q1, q2, q3, q4, q5 := jsonString(e1), jsonString(e2), jsonString(e3), jsonString(e4), jsonString(e5)
		var ev a55.WebhookEvent
		require.NoError(t, json.Unmarshal([]byte(`{"charge_uuid":`+q1+`,"wallet_uuid":`+q2+`,"status":`+q3+`,"event":`+q4+`}`), &ev))
		c := coinepayHostile(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Set-Cookie", "sid="+e5)
			data := `{"card_id":"card_1","recharge_id":` + q5 + `,"header_id":` + q1 + `,"package_id":` + q2 + `,"status":` + q3 +
				`,"currency":` + q4 + `,"balance":"1.00","amount":"1.00"}`
			if r.URL.Path == coinepay.PathCardList {
				data = `{"items":[` + data + `],"page":1,"page_size":10}`
			}
			_, _ = fmt.Fprint(w, `{"code":200,"message":"ok","message_key":"success","data":`+data+`}`)
		})
		r := callCards(t, c)
		vals := []any{ev, *r.apply, r.apply.Card, *r.recharge, r.recharge.Recharge, *r.info, *r.page}
		assertPointersPrintAsValues(t, vals...)
		assertClean(t, "results", allForms(vals...))
	})
}

// coinepayHostile is a coinepay client, retried fast, of a server whose
// every answer is answer's; opts add to its options.
func coinepayHostile(t *testing.T, answer http.HandlerFunc, opts ...payonce.Option) *coinepay.Client {
	t.Helper()
	srv := httptest.NewServer(answer)
	t.Cleanup(srv.Close)
	c, err := coinepay.NewClient("ak_unit", "sk_unit_secret",
		append([]payonce.Option{payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy())}, opts...)...)
	require.NoError(t, err)
	return c
}

// cardResults are the answers of one call of each card operation.
type cardResults struct {
	apply    *coinepay.ApplyResult
	recharge *coinepay.RechargeResult
	info     *coinepay.CardResult
	page     *coinepay.CardPage
}

// callCards applies, recharges, reads and lists cards with c; each call
// must succeed.
func callCards(t *testing.T, c *coinepay.Client) cardResults {
	t.Helper()
	var r cardResults
	var err error
	r.apply, err = c.Cards.Apply(t.Context(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"})
	require.NoError(t, err)
	r.recharge, err = c.Cards.Recharge(t.Context(), &coinepay.RechargeRequest{CardID: "card_1", Amount: payoncetest.Amount("1.00")})
	require.NoError(t, err)
	r.info, err = c.Cards.Info(t.Context(), "card_1")
	require.NoError(t, err)
	r.page, err = c.Cards.List(t.Context(), &coinepay.ListOptions{Page: 1, PageSize: 10})
	require.NoError(t, err)
	return r
}

// errorTree is err and every error reachable from it through Unwrap.
func errorTree(err error) []any {
	if err == nil {
		return nil
	}
	out := []any{err}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, errorTree(e)...)
		}
	case interface{ Unwrap() error }:
		out = append(out, errorTree(u.Unwrap())...)
	}
	return out
}

// An answer the client cannot decode, or a failed charge, quotes the
// server's value in the error's cause (a decoder names the value it could
// not read, a failed charge its ID): no error of the chain, printed or
// logged, shows it.
func TestErrorCausesHideWhatTheServerSent(t *testing.T) {
	t.Parallel()
	a55Bodies := []func(q string) string{
		// A timestamp in no form the client reads is left zero, so the
		// answer fails on the count beside it.
		func(q string) string {
			return `{"charge_uuid":"c1","status":"confirmed","created_at":` + q + `,"installment_count":"x"}`
		},
		func(q string) string { return `{"charge_uuid":"c1","status":"confirmed","amount":` + q + `}` },
		func(q string) string {
			return `{"charge_uuid":` + q + `,"status":"error","message":[{"code":"CARD_DECLINED"}]}`
		},
		func(string) string { return `{"charge_uuid":4111111111111111}` },
	}
	var a55Cases, coinepayCases caseServer
	for i, echo := range echoes {
		q := jsonString(echo)
		for j, body := range a55Bodies {
			a55Cases.add(fmt.Sprintf("%d/%d", j, i), func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = fmt.Fprint(w, body(q))
			})
		}
		coinepayCases.add(fmt.Sprint(i), func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprint(w, `{"code":200,"message":"ok","data":{"card_id":"c1","created_at":"x","balance":`+q+`}}`)
		})
	}
	t.Run("a55", func(t *testing.T) {
		t.Parallel()
		c := a55Hostile(t, a55Cases.ServeHTTP, slog.DiscardHandler)
		a55Cases.run(t, func(t *testing.T, _ string, call payonce.CallOption) {
			_, err := c.Charges.Create(t.Context(), cardCharge(), payonce.WithKey(keytest.Now(t, "hostile-key-0123456789")), call)
			require.Error(t, err)
			assertClean(t, "a55 error chain", allForms(errorTree(err)...))
		})
	})
	t.Run("coinepay", func(t *testing.T) {
		t.Parallel()
		c := coinepayHostile(t, coinepayCases.ServeHTTP)
		coinepayCases.run(t, func(t *testing.T, _ string, call payonce.CallOption) {
			_, err := c.Cards.Info(t.Context(), "c1", call)
			require.Error(t, err)
			assertClean(t, "coinepay error chain", allForms(errorTree(err)...))
		})
	})
}
