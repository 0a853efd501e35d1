package fakeserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOperationsIndexFollowsAttemptsAndExecutions(t *testing.T) {
	e, srv := newTestServer(t, Options{})
	require.NoError(t, e.Faults().Add(Rule{Fault: DropAfterCommit, IdempotencyKey: "key-lost", Count: 1}))
	require.NoError(t, e.Faults().Add(Rule{Fault: ResetBeforeRead, IdempotencyKey: "key-reset", Count: 1}))
	post := func(key, body string) { do(t, http.MethodPost, srv.URL+"/op", key, body) }
	noKeepAlive := func(key string) {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/op", nil)
		require.NoError(t, err)
		req.Header.Set(HeaderIdempotencyKey, key)
		// A fresh connection: net/http resends a keyed request on its own
		// when a reused one drops it.
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
	}
	post("key-ok", "")
	noKeepAlive("key-lost") // executes, answer lost
	post("key-lost", "")    // replay
	post("key-lost", `{"other":1}`)
	noKeepAlive("key-reset") // reset before read: no credential known yet
	post("key-reset", "")
	post("", "") // no key: no row

	var page OpPage
	getAdmin(t, srv.URL+"/_fakepay/operations", &page)
	require.Len(t, page.Operations, 3)
	byKey := map[string]OpSummary{}
	for _, op := range page.Operations {
		byKey[op.IdempotencyKey] = op
	}
	assert.Equal(t, []string{"key-reset", "key-lost", "key-ok"},
		[]string{page.Operations[0].IdempotencyKey, page.Operations[1].IdempotencyKey, page.Operations[2].IdempotencyKey}, "newest first")
	lost := byKey["key-lost"]
	assert.Equal(t, 3, lost.Attempts)
	assert.Equal(t, 1, lost.Executions)
	assert.Equal(t, 1, lost.Replays)
	assert.Equal(t, 1, lost.Conflicts)
	assert.Equal(t, 1, lost.Faults)
	assert.Equal(t, 409, lost.Status)
	assert.Equal(t, "op", lost.Kind)
	reset := byKey["key-reset"]
	assert.Equal(t, 2, reset.Attempts, "the faulted attempt and the retry share one row")
	assert.Equal(t, "c", reset.Credential)
	assert.Equal(t, 1, reset.Executions)

	var d opDetail
	getAdmin(t, fmt.Sprintf("%s/_fakepay/operations/%d", srv.URL, lost.ID), &d)
	require.Len(t, d.Attempts, 3)
	assert.Equal(t, DropAfterCommit, d.Attempts[0].Fault)
	assert.Equal(t, 0, d.Attempts[0].Status)
	assert.True(t, d.Attempts[1].Replayed)
	assert.True(t, d.Attempts[2].Conflict)
	assert.Equal(t, "op", d.Attempts[0].Kind)
	require.Len(t, d.Ledger, 1)
	assert.Equal(t, "key-lost", d.Ledger[0].IdempotencyKey)
	assert.Zero(t, d.AttemptsNotShown)

	// Filters.
	for q, want := range map[string]int{"?key=lost": 1, "?status=4xx": 1, "?status=200": 2, "?status=none": 0,
		"?kind=op": 3, "?kind=other": 0, "?anomalies=1": 0, "?provider=test": 3} {
		var p OpPage
		getAdmin(t, srv.URL+"/_fakepay/operations"+q, &p)
		assert.Len(t, p.Operations, want, q)
	}
	status, _ := do(t, http.MethodGet, srv.URL+"/_fakepay/operations?provider=nope", "", "")
	assert.Equal(t, http.StatusBadRequest, status)

	// Unchanged since a version: a cheap answer.
	var same map[string]any
	getAdmin(t, fmt.Sprintf("%s/_fakepay/operations?if_version=%d", srv.URL, page.Version), &same)
	assert.Equal(t, true, same["unchanged"])

	e.Reset()
	getAdmin(t, srv.URL+"/_fakepay/operations", &page)
	assert.Empty(t, page.Operations)
	status, _ = do(t, http.MethodGet, fmt.Sprintf("%s/_fakepay/operations/%d", srv.URL, lost.ID), "", "")
	assert.Equal(t, http.StatusNotFound, status)
}

func getAdmin(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, url)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
}

func TestOperationsIndexPagesAndCaps(t *testing.T) {
	x := newOpIndex(1000)
	for i := range 1500 {
		a := Attempt{Provider: "p", IdempotencyKey: fmt.Sprintf("k%05d", i), Status: 200 + i%2}
		x.observe(&a)
	}
	p := x.page(OpFilter{Limit: 10})
	assert.Equal(t, 1000, p.Total, "capped")
	assert.Equal(t, 500, p.Evicted)
	assert.Equal(t, "k01499", p.Operations[0].IdempotencyKey)
	seen := 0
	for cursor := uint64(0); ; {
		p := x.page(OpFilter{Before: cursor, Status: "201"})
		seen += len(p.Operations)
		if p.Next == "" {
			break
		}
		_, err := fmt.Sscan(p.Next, &cursor)
		require.NoError(t, err)
	}
	assert.Equal(t, 500, seen, "every odd row, across pages")
	_, _, ok := x.get(1)
	assert.False(t, ok, "evicted")
	assert.Len(t, x.byKey, 1000, "the key map shrinks with the rows")
}

func TestOperationsIndexScanIsBounded(t *testing.T) {
	x := newOpIndex(0)
	for i := range MaxOpScan + 10 {
		a := Attempt{Provider: "p", IdempotencyKey: fmt.Sprintf("k%07d", i), Status: 200}
		x.observe(&a)
	}
	p := x.page(OpFilter{Status: "500"})
	assert.Empty(t, p.Operations)
	assert.True(t, p.Partial)
	require.NotEmpty(t, p.Next)
	var cursor uint64
	_, err := fmt.Sscan(p.Next, &cursor)
	require.NoError(t, err)
	p = x.page(OpFilter{Status: "500", Before: cursor})
	assert.False(t, p.Partial)
	assert.Empty(t, p.Next)
}

// BenchmarkOperationsPage lists one page of a million keys: the newest
// page, and a filter that matches nothing (the bounded scan's worst case).
func BenchmarkOperationsPage(b *testing.B) {
	x := newOpIndex(0)
	for i := range 1_000_000 {
		a := Attempt{Provider: "a55", IdempotencyKey: fmt.Sprintf("order-%07d-payment", i), Kind: "charge.create", Status: 200}
		x.observe(&a)
	}
	b.Run("newest", func(b *testing.B) {
		for b.Loop() {
			if p := x.page(OpFilter{Limit: 50}); len(p.Operations) != 50 {
				b.Fatal(len(p.Operations))
			}
		}
	})
	b.Run("no-match", func(b *testing.B) {
		for b.Loop() {
			if p := x.page(OpFilter{Status: "500"}); !p.Partial {
				b.Fatal("want a partial page")
			}
		}
	})
}

func TestConsoleDetailNoteNamesTheDetailCap(t *testing.T) {
	js, err := consoleAssets.ReadFile("console/console.js")
	require.NoError(t, err)
	m := regexp.MustCompile(`past the first (\d+)`).FindSubmatch(js)
	require.NotNil(t, m, "the detail says how many attempts it lists")
	assert.Equal(t, strconv.Itoa(MaxDetailAttempts), string(m[1]), "the note names the cap the detail applies")
}

func TestRequestLogNeverHoldsACardNumberFromAPath(t *testing.T) {
	const pan = "4111111111111111"
	e, srv := newTestServer(t, Options{})
	do(t, http.MethodPost, srv.URL+"/cards/"+pan, "key-plain-1", `{}`)
	do(t, http.MethodPost, srv.URL+"/cards/%34%31%31%31%31%31%31%31%31%31%31%31%31%31%31%31/x", "key-plain-2", `{}`)
	// named as a card number, Luhn or not; encoded; a CVV by its name
	do(t, http.MethodPost, srv.URL+"/cards/card_number/"+testCardNoLuhn+"/x", "key-plain-3", `{}`)
	do(t, http.MethodPost, srv.URL+"/cards/"+base64.StdEncoding.EncodeToString([]byte(pan))+"/x", "key-plain-4", `{}`)
	do(t, http.MethodPost, srv.URL+"/cards;cvv=987/x", "key-plain-5", `{}`)
	atts, _ := e.attempts.Page(0, 10, "", "")
	require.Len(t, atts, 5)
	for _, a := range atts {
		assert.NotContains(t, a.Path, pan)
		assert.NotContains(t, a.Path, testCardNoLuhn)
		assert.NotContains(t, a.Path, "987")
		assert.Contains(t, a.Path, "/cards", "the rest of the path is kept")
	}
	for path, shown := range map[string]string{"/_fakepay/requests": "************1111", "/_fakepay/operations/1": "************1111",
		"/_fakepay/operations/2": "************1111", "/_fakepay/operations/3": "/cards/card_number/************0011/x",
		"/_fakepay/operations/5": "/cards;cvv=***/x"} {
		resp := call(t, "GET", srv.URL+path, nil)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.NotContains(t, string(body), pan, path)
		assert.NotContains(t, string(body), testCardNoLuhn, path)
		assert.Contains(t, string(body), shown, path)
	}
}
