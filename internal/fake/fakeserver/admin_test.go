package fakeserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testBackend has a public token route and a keyed operation that records
// itself in the ledger.
type testBackend struct{ e *Engine }

func (b testBackend) Route(method, path string) (Route, Problem) {
	switch path {
	case "/token":
		return Route{Kind: "token", Public: true, Handle: func(*Request) Response { return JSON(200, map[string]string{"access_token": "t"}) }}, ProblemNone
	case "/op":
		return Route{Kind: "op", Keyed: true, Handle: func(r *Request) Response {
			b.e.Record(Operation{Provider: "test", Kind: "op", IdempotencyKey: r.Key, ID: b.e.NewID("op_")})
			return JSON(200, map[string]string{"ok": "yes"})
		}}, ProblemNone
	}
	return Route{}, ProblemNotFound
}
func (testBackend) Authenticate(r *Request) *Response { r.Credential = "c"; return nil }
func (testBackend) Problem(p Problem, _ int, _ string) Response {
	return JSON(p.Status(), map[string]int{"code": p.Status()})
}
func (testBackend) Decorate(http.Header, *Request) {}

func newTestServer(t *testing.T, o Options) (*Engine, *httptest.Server) {
	e := New(o)
	srv := httptest.NewServer(WithAdmin(e.AdminHandler(AdminConfig{}), e.Handler(ProviderConfig{Name: "test"}, testBackend{e})))
	t.Cleanup(srv.Close)
	return e, srv
}

func do(t *testing.T, method, url, key, body string) (int, map[string]any) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if key != "" {
		req.Header.Set(HeaderIdempotencyKey, key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var v map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&v)
	return resp.StatusCode, v
}

func TestAdminClockRange(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	e, srv := newTestServer(t, Options{Clock: NewFixedClock(start)})
	for _, body := range []string{`{"advance":"2562047h"}`, `{"advance":"-2562047h"}`, `{"set":"9999-01-01T00:00:00Z"}`, `{"set":"1900-01-01T00:00:00Z"}`} {
		st, v := do(t, http.MethodPost, srv.URL+"/_fakepay/clock", "", body)
		assert.Equal(t, 400, st, body)
		assert.Equal(t, "clock_out_of_range", v["error"].(map[string]any)["code"], body)
		assert.Equal(t, start, e.Clock().Now(), "the clock did not move: %s", body)
	}
	st, _ := do(t, http.MethodPost, srv.URL+"/_fakepay/clock", "", `{"advance":"25h"}`)
	assert.Equal(t, 200, st)
	assert.Equal(t, start.Add(25*time.Hour), e.Clock().Now())

	real := NewClock()
	assert.ErrorIs(t, real.TryAdvance(1<<63-1), ErrClockRange)
	assert.WithinDuration(t, time.Now(), real.Now(), time.Second)
}

// Reset puts the clock back, so signed calls work again after a test
// moved it a day ahead.
func TestResetResetsClock(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	e, srv := newTestServer(t, Options{Clock: NewFixedClock(start)})
	do(t, http.MethodPost, srv.URL+"/_fakepay/clock", "", `{"advance":"25h"}`)
	st, _ := do(t, http.MethodPost, srv.URL+"/_fakepay/reset", "", ``)
	require.Equal(t, 200, st)
	assert.Equal(t, start, e.Clock().Now())

	real := NewClock()
	real.Advance(25 * time.Hour)
	real.Reset()
	assert.WithinDuration(t, time.Now(), real.Now(), time.Second)
}

func TestAdminLedgerPagesAndFilters(t *testing.T) {
	e, srv := newTestServer(t, Options{})
	for i := range 25 {
		st, _ := do(t, http.MethodPost, srv.URL+"/op", "key-"+strconv.Itoa(i%5), `{"n":`+strconv.Itoa(i%5)+`}`)
		require.Equal(t, 200, st)
		e.Record(Operation{Provider: "other", Kind: "x", IdempotencyKey: "free-" + strconv.Itoa(i)})
	}
	require.Equal(t, 30, e.Ledger().Len(), "5 keyed operations, 25 recorded directly")

	var got []string
	after := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		st, v := do(t, http.MethodGet, srv.URL+"/_fakepay/ledger?provider=other&limit=10&after="+after, "", "")
		require.Equal(t, 200, st)
		for _, op := range v["operations"].([]any) {
			got = append(got, op.(map[string]any)["idempotency_key"].(string))
		}
		assert.EqualValues(t, 30, v["last_seq"])
		next, _ := v["next"].(string)
		if next == "" {
			break
		}
		after = next
	}
	require.Len(t, got, 25)
	assert.Equal(t, "free-0", got[0])
	assert.Equal(t, "free-24", got[24])

	_, v := do(t, http.MethodGet, srv.URL+"/_fakepay/ledger?idempotency_key=key-3", "", "")
	require.Len(t, v["operations"], 1)
	_, v = do(t, http.MethodGet, srv.URL+"/_fakepay/ledger?kind=op", "", "")
	assert.Len(t, v["operations"], 5)
	_, v = do(t, http.MethodGet, srv.URL+"/_fakepay/ledger?since="+time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "", "")
	assert.Empty(t, v["operations"])
	for _, q := range []string{"limit=0", "limit=1001", "limit=x", "after=-1", "since=yesterday"} {
		st, _ := do(t, http.MethodGet, srv.URL+"/_fakepay/ledger?"+q, "", "")
		assert.Equal(t, 400, st, q)
	}
	e.Reset()
	e.Record(Operation{Kind: "after-reset"})
	assert.EqualValues(t, 31, e.Ledger().LastSeq(), "sequence numbers survive a reset")
}

func TestAdminRequestsPaged(t *testing.T) {
	_, srv := newTestServer(t, Options{})
	for i := range 7 {
		do(t, http.MethodPost, srv.URL+"/op", "k"+strconv.Itoa(i), `{}`)
	}
	st, v := do(t, http.MethodGet, srv.URL+"/_fakepay/requests?limit=5", "", "")
	require.Equal(t, 200, st)
	require.Len(t, v["requests"], 5)
	_, v = do(t, http.MethodGet, srv.URL+"/_fakepay/requests?after="+v["next"].(string), "", "")
	require.Len(t, v["requests"], 2)
	assert.Nil(t, v["next"])
	_, v = do(t, http.MethodGet, srv.URL+"/_fakepay/requests?idempotency_key=k3", "", "")
	require.Len(t, v["requests"], 1)
}

func TestStatsDoNotCountTokenRequests(t *testing.T) {
	e, srv := newTestServer(t, Options{})
	do(t, http.MethodPost, srv.URL+"/token", "", "")
	do(t, http.MethodPost, srv.URL+"/op", "k1", "{}")
	assert.Equal(t, 1, e.Stats().Executed)
	assert.Equal(t, 2, e.Stats().Requests)
}

// The attempt log keeps a bounded copy of a long path and key, never a
// substring holding the whole request alive.
func TestAttemptLogKeepsBoundedCopies(t *testing.T) {
	e, srv := newTestServer(t, Options{})
	long := "/" + strings.Repeat("p", 100<<10)
	do(t, http.MethodGet, srv.URL+long, strings.Repeat("k", 4000), "")
	atts := e.Attempts().All()
	require.Len(t, atts, 1)
	assert.LessOrEqual(t, len(atts[0].Path), MaxLogField+3)
	assert.LessOrEqual(t, len(atts[0].IdempotencyKey), MaxLogField+3)

	s := strings.Repeat("x", 1000)
	c := Clip(s)
	assert.NotEqual(t, uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(c))), "a copy, not a substring")
	short := s[:10]
	assert.NotEqual(t, uintptr(unsafe.Pointer(unsafe.StringData(short))), uintptr(unsafe.Pointer(unsafe.StringData(Clip(short)))))
}

// MaxOperations bounds the ledger and the kept answers; an evicted key
// still never executes twice.
func TestMaxOperations(t *testing.T) {
	e, srv := newTestServer(t, Options{MaxOperations: 10})
	for i := range 50 {
		st, _ := do(t, http.MethodPost, srv.URL+"/op", "key-"+strconv.Itoa(i), `{}`)
		require.Equal(t, 200, st)
	}
	assert.Equal(t, 10, e.Ledger().Len())
	assert.Equal(t, 40, e.Ledger().Evicted())
	st, _ := do(t, http.MethodPost, srv.URL+"/op", "key-49", `{}`)
	assert.Equal(t, 200, st, "a recent key replays")
	st, _ = do(t, http.MethodPost, srv.URL+"/op", "key-0", `{}`)
	assert.Equal(t, 409, st, "an old key answers 409 instead of executing again")
	assert.Equal(t, 50, e.Stats().Executed)
	assert.EqualValues(t, 50, e.Ledger().LastSeq())
}

// A fault rule or a filter that can never match is a mistake the caller
// must hear about: a misspelt field ("retryAfter") or an unknown provider
// would otherwise be accepted and the test would silently run without
// its fault.
func TestAdminRefusesRulesAndFiltersThatCannotMatch(t *testing.T) {
	_, srv := newTestServer(t, Options{})
	for _, body := range []string{
		`{"fault":"rate_limit","provider":"visa"}`,
		`{"fault":"rate_limit","retryAfter":5}`,
		`{"fault":"drop_after_commit","idempotencyKey":"k-1"}`,
	} {
		status, v := do(t, http.MethodPost, srv.URL+"/_fakepay/faults", "", body)
		assert.Equal(t, http.StatusBadRequest, status, body)
		assert.NotNil(t, v["error"], body)
	}
	status, v := do(t, http.MethodGet, srv.URL+"/_fakepay/faults", "", "")
	assert.Equal(t, http.StatusOK, status)
	assert.Empty(t, v["rules"], "no rule was added")

	// The attempt log holds only requests to the providers served. (The
	// ledger may also hold operations recorded directly, so its filter
	// stays free.)
	status, _ = do(t, http.MethodGet, srv.URL+"/_fakepay/requests?provider=visa", "", "")
	assert.Equal(t, http.StatusBadRequest, status)
	// The provider the engine serves is accepted everywhere.
	status, _ = do(t, http.MethodPost, srv.URL+"/_fakepay/faults", "", `{"fault":"rate_limit","provider":"test","delay":"1ms"}`)
	assert.Equal(t, http.StatusCreated, status)
	for _, q := range []string{"/_fakepay/ledger?provider=test", "/_fakepay/requests?provider=test"} {
		status, _ := do(t, http.MethodGet, srv.URL+q, "", "")
		assert.Equal(t, http.StatusOK, status, q)
	}
}

// A clock move that names both an advance and a time is ambiguous: one of
// them would be ignored without a word.
func TestAdminClockRefusesAdvanceAndSetTogether(t *testing.T) {
	e, srv := newTestServer(t, Options{})
	before := e.clock.Now()
	status, v := do(t, http.MethodPost, srv.URL+"/_fakepay/clock", "", `{"advance":"1h","set":"2030-01-01T00:00:00Z"}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.NotNil(t, v["error"])
	assert.Less(t, e.clock.Now().Sub(before), time.Hour, "the clock did not move")
}

// A well-formed body with a bad value is an invalid request, not malformed
// JSON, and its message says what is wrong once.
func TestAdminBadValueIsAnInvalidRequest(t *testing.T) {
	_, srv := newTestServer(t, Options{})
	status, v := do(t, http.MethodPost, srv.URL+"/_fakepay/faults", "", `{"fault":"delay","delay":"soon"}`)
	assert.Equal(t, http.StatusBadRequest, status)
	e, _ := v["error"].(map[string]any)
	assert.Equal(t, "invalid_request", e["code"], v)
	status, v = do(t, http.MethodPost, srv.URL+"/_fakepay/faults", "", `{"fault":`)
	assert.Equal(t, http.StatusBadRequest, status)
	e, _ = v["error"].(map[string]any)
	assert.Equal(t, "invalid_json", e["code"], v)
}

// What a provider's webhook deliveries hold is shown masked in an
// operation's detail: no card number (Luhn or not), CVV, secret or token
// reaches the console.
func TestOperationDetailMasksWebhookDeliveries(t *testing.T) {
	e := New(Options{})
	hook := func(id string) any {
		return []map[string]any{{
			"id": "wh_1", "url": "https://merchant:hunter2@merchant.example/hook",
			"body":         map[string]any{"charge_uuid": id, "card_number": testCardNoLuhn, "cvv": "987", "note": "pan " + testPAN},
			"access_token": "tok-secret-1",
		}}
	}
	srv := httptest.NewServer(WithAdmin(e.AdminHandler(AdminConfig{Webhooks: hook}), e.Handler(ProviderConfig{Name: "test"}, testBackend{e})))
	t.Cleanup(srv.Close)
	status, _ := do(t, http.MethodPost, srv.URL+"/op", "key-webhook-1", `{}`)
	require.Equal(t, http.StatusOK, status)
	resp := call(t, "GET", srv.URL+"/_fakepay/operations/1", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	// The CVV as a JSON string of its own: three digits alone also occur
	// inside the detail's timestamps and random IDs.
	for _, secret := range []string{testPAN, testCardNoLuhn, `"987"`, "hunter2", "tok-secret-1"} {
		assert.NotContains(t, string(body), secret)
	}
	var d struct {
		Webhooks []struct {
			Resource   string           `json:"resource"`
			Deliveries []map[string]any `json:"deliveries"`
		} `json:"webhooks"`
	}
	require.NoError(t, json.Unmarshal(body, &d))
	require.Len(t, d.Webhooks, 1)
	require.Len(t, d.Webhooks[0].Deliveries, 1)
	dv := d.Webhooks[0].Deliveries[0]
	assert.Equal(t, "wh_1", dv["id"], "the rest is kept")
	assert.Equal(t, "https://merchant:[REDACTED]@merchant.example/hook", dv["url"])
	assert.Equal(t, map[string]any{"charge_uuid": d.Webhooks[0].Resource, "card_number": "************0011", "cvv": "***",
		"note": "pan ************1111"}, dv["body"])
}
