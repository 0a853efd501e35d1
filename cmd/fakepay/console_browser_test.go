package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/payoncetest"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// The browser tests drive the console in headless Chromium. They run
// when $PAYONCE_CHROMIUM names the browser, a path or a name on PATH
// (PAYONCE_CHROMIUM=chromium), and skip with one line saying so when it
// is unset: a browser costs a go test -race ./... more CPU than any
// package's own tests. Screenshots go to $PAYONCE_CONSOLE_SCREENSHOTS,
// else to the test's temporary directory.
const (
	chromiumEnv    = "PAYONCE_CHROMIUM"
	screenshotsEnv = "PAYONCE_CONSOLE_SCREENSHOTS"
)

// chromiumSkipped is the line the browser tests skip with.
const chromiumSkipped = "console browser tests skipped (" + chromiumEnv + " is not set); run them with " +
	chromiumEnv + "=chromium go test -run InBrowser ./cmd/fakepay (apt-get install -y chromium)"

// findChromium is the browser $PAYONCE_CHROMIUM names, or "" when it is
// unset; one it names but that cannot be found fails the test.
func findChromium(t *testing.T) string {
	t.Helper()
	name := os.Getenv(chromiumEnv)
	if name == "" {
		return ""
	}
	p, err := exec.LookPath(name)
	require.NoError(t, err, "%s=%s", chromiumEnv, name)
	return p
}

// consoleFake is fakepay in-process: its handler on a loopback test server.
type consoleFake struct {
	url    string
	engine *fakeserver.Engine
}

func newConsoleFake(t *testing.T, args ...string) *consoleFake {
	t.Helper()
	o, err := parseFlags(append([]string{"-seed", "7", "-a55-rate-limit", "0"}, args...), nil)
	require.NoError(t, err)
	h, e, err := newHandler(o)
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(h)
	fakeserver.Harden(srv.Config)
	srv.Start()
	t.Cleanup(func() { e.Close(); srv.CloseClientConnections(); srv.Close() })
	return &consoleFake{url: srv.URL, engine: e}
}

func (f *consoleFake) a55Client(t *testing.T) *a55.Client {
	t.Helper()
	auth := a55.ClientCredentials("demo-client", "demo-secret")
	auth.TokenURL = f.url + "/oauth2/token"
	c, err := a55.NewClient(auth, payonce.WithBaseURL(f.url), payoncetest.ClientClock(f.engine.Clock().Now),
		payonce.WithRetryPolicy(burstRetries()),
		payonce.WithHTTPClient(&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}))
	require.NoError(t, err)
	// The account fakepay gave demo-client, as a user reads it from the
	// admin API: the charges name its merchant and wallet.
	var accounts struct {
		Accounts []struct {
			ClientID   string `json:"client_id"`
			MerchantID string `json:"merchant_id"`
			WalletUUID string `json:"wallet_uuid"`
		} `json:"accounts"`
	}
	getJSON(t, f.url, "/_fakepay/a55/accounts", &accounts)
	for _, a := range accounts.Accounts {
		if a.ClientID == "demo-client" {
			return c.WithAccount(a55.Account{MerchantID: a.MerchantID, WalletUUID: a.WalletUUID})
		}
	}
	require.FailNow(t, "fakepay gave demo-client no account")
	return nil
}

// burstRetries are millisecond retries with attempts to spare: under 50 %
// lost answers and 20 % errors, five attempts are not always enough.
func burstRetries() payonce.RetryPolicy {
	p := payoncetest.FastRetryPolicy()
	p.MaxAttempts = 20
	return p
}

func (f *consoleFake) coinepayClient(t *testing.T) *coinepay.Client {
	t.Helper()
	c, err := coinepay.NewClient("demo-key", "demo-secret", payonce.WithBaseURL(f.url), payoncetest.ClientClock(f.engine.Clock().Now),
		payonce.WithRetryPolicy(burstRetries()),
		payonce.WithHTTPClient(&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}))
	require.NoError(t, err)
	return c
}

func (f *consoleFake) addFault(t *testing.T, rule fakeserver.Rule) {
	t.Helper()
	require.NoError(t, f.engine.Faults().Add(rule))
}

// browser is one headless Chromium for the whole test binary's run of
// TestConsoleInBrowser; each subtest opens its own tab.
type browser struct {
	ctx   context.Context
	shots string
}

func (b *browser) tab(t *testing.T) (context.Context, *dialogs) {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	t.Cleanup(cancel)
	d := &dialogs{}
	events := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			d.add(string(ev.Type), ev.Message)
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return ctx, d
}

func (b *browser) screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	path := filepath.Join(b.shots, name+".png")
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot %s (%d bytes)", path, len(png))
}

// dialogs records every JavaScript dialog a page opened (and accepts it).
type dialogs struct {
	mu   sync.Mutex
	seen []string
}

func (d *dialogs) add(kind, msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seen = append(d.seen, kind+": "+msg)
}

func (d *dialogs) all() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.seen...)
}

func TestConsoleInBrowser(t *testing.T) {
	exe := findChromium(t)
	if exe == "" {
		t.Skip(chromiumSkipped)
	}
	shots := os.Getenv(screenshotsEnv)
	if shots == "" {
		shots = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(shots, 0o755))
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1400, 900))
	// Bounds a hung browser; the subtests take a few seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	_, err := chromedp.Run(bctx, chromedp.Location())
	require.NoError(t, err, "start %s", exe)
	b := &browser{ctx: bctx, shots: shots}

	t.Run("ChaosBurst", func(t *testing.T) { testConsoleChaosBurst(t, b) })
	t.Run("HostileInput", func(t *testing.T) { testConsoleHostileInput(t, b) })
	t.Run("CrossSitePage", func(t *testing.T) { testConsoleCrossSitePage(t, b) })
	t.Run("AdminToken", func(t *testing.T) { testConsoleAdminToken(t, b) })
	t.Run("Webhooks", func(t *testing.T) { testConsoleWebhooks(t, b) })
	t.Run("Lifecycle", func(t *testing.T) { testConsoleLifecycle(t, b) })
	t.Run("Answers", func(t *testing.T) { testConsoleAnswers(t, b) })
	t.Run("ThreeDSChallenge", func(t *testing.T) { testThreeDSChallengePage(t, b) })
}

// rowView is one row of the operations table as the page shows it.
type rowView struct {
	ID         string `json:"id"`
	Key        string `json:"key"`
	Attempts   string `json:"attempts"`
	Executions string `json:"executions"`
	ExecClass  string `json:"execClass"`
	Replays    string `json:"replays"`
	Status     string `json:"status"`
}

const readRows = `Array.from(document.querySelectorAll('#ops tbody tr.op')).map(tr => ({
	id: tr.dataset.id, key: tr.querySelector('td.key').textContent,
	attempts: tr.querySelector('td.attempts').textContent,
	executions: tr.querySelector('td.executions').textContent,
	execClass: tr.querySelector('td.executions').className,
	replays: tr.querySelector('td.replays').textContent,
	status: tr.querySelector('td.status').textContent}))`

func testConsoleChaosBurst(t *testing.T, b *browser) {
	f := newConsoleFake(t)
	// Lost answers and failures before the commit, on both providers.
	f.addFault(t, fakeserver.Rule{Fault: fakeserver.DropAfterCommit, Provider: "a55", Path: "/api/v1/bank/wallet/charge*", Probability: 0.5})
	f.addFault(t, fakeserver.Rule{Fault: fakeserver.ErrorBeforeCommit, Provider: "a55", Path: "/api/v1/bank/wallet/charge*", Probability: 0.2})
	f.addFault(t, fakeserver.Rule{Fault: fakeserver.DropAfterCommit, Provider: "coinepay", Path: "/api/v1/openapi/card/apply", Probability: 0.5})
	ac, cc := f.a55Client(t), f.coinepayClient(t)
	const charges, cards = 24, 6
	created := f.engine.Clock().Now()
	var wg sync.WaitGroup
	errs := make(chan error, charges+cards)
	for i := range charges {
		wg.Go(func() {
			key, err := payonce.NewKey(created, "console:charge", fmt.Sprintf("job-%03d", i))
			if err == nil {
				_, err = ac.Charges.Create(context.Background(), chargeRequest(), payonce.WithKey(key))
			}
			errs <- err
		})
	}
	for i := range cards {
		wg.Go(func() {
			key, err := payonce.NewKey(created, fmt.Sprintf("console-card-%03d", i))
			if err == nil {
				_, err = cc.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}, payonce.WithKey(key))
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	page := f.engine.Operations(fakeserver.OpFilter{})
	require.Len(t, page.Operations, charges+cards)
	// A lost Coinepay answer is replayed under its key; a lost A55 create
	// is looked up instead (A55 keeps only 2xx answers under a key), so
	// the operation to open is one whose attempts lost an answer.
	var faulted fakeserver.OpSummary
	replays, coinepayDrops := 0, 0
	for _, op := range page.Operations {
		require.Equal(t, 1, op.Executions, op.IdempotencyKey)
		replays += op.Replays
		for _, a := range f.engine.Attempts().ByKey(op.IdempotencyKey) {
			if a.Fault != fakeserver.DropAfterCommit {
				continue
			}
			if op.Provider == "coinepay" {
				coinepayDrops++
			}
			if op.Attempts > faulted.Attempts || faulted.IdempotencyKey == "" {
				faulted = op
			}
		}
	}
	require.NotEmpty(t, faulted.IdempotencyKey, "the burst lost no answer")
	if coinepayDrops > 0 {
		require.Positive(t, replays, "a lost Coinepay answer is replayed")
	}

	ctx, dlg := b.tab(t)
	browse(t, ctx,
		chromedp.Navigate(f.url+"/_fakepay/"),
		waitJS(fmt.Sprintf(`document.querySelectorAll('#ops tbody tr.op').length === %d`, charges+cards)),
	)
	rows := mustEval[[]rowView](t, ctx, readRows)
	b.screenshot(t, ctx, "operations")
	require.Len(t, rows, charges+cards)
	seenReplays := 0
	for i, r := range rows {
		want := page.Operations[i] // newest first, as the engine pages them
		assert.Equal(t, want.IdempotencyKey, r.Key)
		assert.Equal(t, "1", r.Executions, r.Key)
		assert.Contains(t, r.ExecClass, "ok", "executions = 1 is green")
		assert.Equal(t, fmt.Sprint(want.Replays), r.Replays, r.Key)
		assert.Equal(t, fmt.Sprint(want.Attempts), r.Attempts, r.Key)
		// A lost A55 answer is looked up, not sent again: its latest
		// attempt may be the one whose answer was lost.
		assert.Equal(t, map[bool]string{true: "no answer", false: fmt.Sprint(want.Status)}[want.Status == 0], r.Status, r.Key)
		if want.Status != 0 {
			assert.Equal(t, "200", r.Status, r.Key)
		}
		var n int
		_, _ = fmt.Sscan(r.Replays, &n)
		seenReplays += n
	}
	assert.Equal(t, replays, seenReplays)

	// One operation: every attempt in order, with its fault.
	browse(t, ctx,
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`#ops tr[data-id="%d"] td.key a`, faulted.ID))),
		waitJS(fmt.Sprintf(`document.querySelectorAll('#d-attempts tbody tr.attempt').length === %d`, faulted.Attempts)),
	)
	faults := mustEval[[]string](t, ctx, `Array.from(document.querySelectorAll('#d-attempts td.fault')).map(td => td.textContent)`)
	statuses := mustEval[[]string](t, ctx, `Array.from(document.querySelectorAll('#d-attempts td.status')).map(td => td.textContent)`)
	b.screenshot(t, ctx, "operation-detail")
	var wantFaults, wantStatuses []string
	for _, a := range f.engine.Attempts().ByKey(faulted.IdempotencyKey) {
		fault := string(a.Fault)
		if fault == "" {
			fault = "none"
		}
		wantFaults = append(wantFaults, fault)
		wantStatuses = append(wantStatuses, map[bool]string{true: "no answer", false: fmt.Sprint(a.Status)}[a.Status == 0])
	}
	assert.Equal(t, wantFaults, faults)
	assert.Equal(t, wantStatuses, statuses)
	assert.Contains(t, faults, string(fakeserver.DropAfterCommit))

	// Advance the fake clock 25 h from the page (the confirm dialog is accepted).
	before := f.engine.Clock().Now()
	browse(t, ctx,
		chromedp.SetValue(chromedp.ID("clock-advance"), "25h"),
		chromedp.Click(chromedp.ID("clock-advance-btn")),
		waitJS(`document.getElementById('message').textContent.startsWith('clock now')`),
	)
	assert.GreaterOrEqual(t, f.engine.Clock().Now().Sub(before), 25*time.Hour)
	require.NotEmpty(t, dlg.all(), "no confirm before moving the clock")
	assert.True(t, strings.HasPrefix(dlg.all()[0], "confirm: Advance the fake clock by 25h"), dlg.all())

	// The job queue redelivers the first charge 25 h later: the client
	// refuses it before sending, and the console shows no new attempt.
	first := page.Operations[len(page.Operations)-1]
	for _, op := range page.Operations {
		if op.Provider == "a55" {
			first = op
		}
	}
	jobID := strings.TrimPrefix(first.IdempotencyKey, "console:charge:")
	key, err := payonce.NewKey(created, "console:charge", jobID)
	require.NoError(t, err)
	_, err = ac.Charges.Create(context.Background(), chargeRequest(), payonce.WithKey(key))
	require.ErrorIs(t, err, payonce.ErrKeyExpired)
	// The page shows the moved clock once it has polled it: wait for that.
	day := f.engine.Clock().Now().UTC().Format("2006-01-02")
	browse(t, ctx,
		chromedp.Navigate(f.url+"/_fakepay/#/op/"+fmt.Sprint(first.ID)),
		waitJS(fmt.Sprintf(`document.getElementById('d-attempts').tBodies[0].rows.length === %d`, first.Attempts)),
		waitJS(fmt.Sprintf(`document.getElementById('clock').textContent.includes(%q)`, day)),
	)
	row, ok := f.engine.Operation(first.ID)
	require.True(t, ok)
	assert.Equal(t, first.Attempts, row.Attempts, "the expired redelivery reached the fake")
	assert.Equal(t, 1, row.Executions)
	b.screenshot(t, ctx, "after-25h")

	// Live: a new operation appears on the open page, without a reload
	// (the marker set on this page survives).
	browse(t, ctx,
		chromedp.Navigate(f.url+"/_fakepay/#/"),
		waitJS(fmt.Sprintf(`document.querySelectorAll('#ops tbody tr.op').length === %d`, charges+cards)),
	)
	require.True(t, mustEval[bool](t, ctx, `window.__samePage = true`))
	live, err := payonce.NewKey(f.engine.Clock().Now(), "console-live-order-0001")
	require.NoError(t, err)
	_, err = ac.Charges.Create(context.Background(), chargeRequest(), payonce.WithKey(live))
	require.NoError(t, err)
	browse(t, ctx, waitJS(`document.querySelector('#ops tbody tr.op td.key').textContent === 'console-live-order-0001'`))
	assert.True(t, mustEval[bool](t, ctx, `window.__samePage === true`), "the page reloaded")
}

func chargeRequest() *a55.ChargeCreateRequest {
	return a55test.Complete(&a55.ChargeCreateRequest{
		InstallmentValue: payoncetest.Amount("10.00"), Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard,
		Card: &payonce.Card{Number: "4111111111111111", HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2035", CVV: "123"},
	})
}

// hostile is markup that runs script if a page ever parses it as HTML.
const (
	hostilePath = `/api/v1/bank/wallet/charge/<img src=x onerror="window.__pwned=1;alert(1)">`
	hostileKey  = `"><script>window.__pwned=2;alert(2)</script><svg/onload=alert(3)>`
	hostileBody = `{"amount":"1.00","description":"</script><script>window.__pwned=4;alert(4)</script>"}`
)

func testConsoleHostileInput(t *testing.T, b *browser) {
	f := newConsoleFake(t)
	tok := f.a55Token(t)
	send := func(method, path, key, body string) {
		req, err := http.NewRequest(method, f.url+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(corekit.HeaderIdempotencyKey, key)
		req.Header.Set("User-Agent", `<script>window.__pwned=5</script>`)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	send(http.MethodPost, hostilePath+"/refund/<b>x</b>", hostileKey, hostileBody)
	send(http.MethodPost, "/api/v1/bank/wallet/charge/", hostileKey, hostileBody)
	page := f.engine.Operations(fakeserver.OpFilter{})
	require.Len(t, page.Operations, 1)
	id := page.Operations[0].ID
	// A fault rule is listed on every view: its fields are shown as text too.
	f.addFault(t, fakeserver.Rule{Fault: fakeserver.Hang, Path: `/<img src=x onerror="window.__pwned=6">`, IdempotencyKey: `<b>k</b>`})

	ctx, dlg := b.tab(t)
	browse(t, ctx,
		chromedp.Navigate(f.url+"/_fakepay/"),
		waitJS(`document.querySelectorAll('#ops tbody tr.op').length === 1`),
	)
	keyText := mustEval[string](t, ctx, `document.querySelector('#ops td.key').innerText`)
	browse(t, ctx,
		chromedp.Click(chromedp.CSS(`#ops td.key a`)),
		waitJS(`document.querySelectorAll('#d-attempts tbody tr.attempt').length === 2`),
	)
	pathTexts := mustEval[[]string](t, ctx, `Array.from(document.querySelectorAll('#d-attempts td.path')).map(td => td.innerText)`)
	pwned := mustEval[int](t, ctx, `window.__pwned === undefined ? 0 : window.__pwned`)
	injected := mustEval[int](t, ctx, `document.querySelectorAll('img, svg, b, iframe, object, script:not([src])').length`)
	faultText := mustEval[string](t, ctx, `document.getElementById('faults').innerText`)
	b.screenshot(t, ctx, "hostile-input")
	assert.Equal(t, hostileKey, strings.TrimSpace(keyText), "the key is shown as text")
	assert.Contains(t, pathTexts, hostilePath+"/refund/<b>x</b>", "the path is shown as text")
	assert.Zero(t, pwned, "script from a request ran")
	assert.Zero(t, injected, "markup from a request became elements")
	assert.Contains(t, faultText, `/<img src=x onerror="window.__pwned=6">`)
	assert.Contains(t, faultText, `<b>k</b>`)
	assert.Empty(t, dlg.all(), "a dialog opened")
	assert.Equal(t, fmt.Sprintf("#/op/%d", id), mustEval[string](t, ctx, `location.hash`))
}

func (f *consoleFake) a55Token(t *testing.T) string {
	t.Helper()
	resp, err := http.PostForm(f.url+"/oauth2/token", map[string][]string{
		"grant_type": {"client_credentials"}, "client_id": {"demo-client"}, "client_secret": {"demo-secret"}})
	require.NoError(t, err)
	defer resp.Body.Close()
	var v struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
	require.NotEmpty(t, v.AccessToken)
	return v.AccessToken
}

func mustEval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	require.NoError(t, err, js)
	return v
}

// browse runs the steps in the tab; on failure it reports what the page
// showed.
func browse(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 3000)`))
		t.Fatalf("browser: %v\npage text:\n%s", err, text)
	}
}

// waitJS waits until the expression is true in the page (the page polls,
// on each animation frame).
func waitJS(expr string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[bool](expr)(ctx, tg)
		return chromedp.Void{}, err
	}
}

// testConsoleCrossSitePage opens a page of another origin that posts to
// the fake's admin API, as a malicious site a developer visits would: a
// form submission and a no-cors fetch. Neither resets the fake.
func testConsoleCrossSitePage(t *testing.T, b *browser) {
	f := newConsoleFake(t)
	f.addFault(t, fakeserver.Rule{Fault: fakeserver.Hang, Path: "/never"})
	reset := f.url + "/_fakepay/reset"
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!DOCTYPE html><form id="f" method="POST" action="%s" enctype="text/plain"><input name="x" value="y"></form>
<script>
fetch(%q, {method: "POST", mode: "no-cors", body: "{}"}).finally(() => document.getElementById("f").submit());
fetch(%q, {method: "DELETE", mode: "no-cors"});
</script>`, reset, reset, f.url+"/_fakepay/faults")
	}))
	t.Cleanup(evil.Close)
	ctx, _ := b.tab(t)
	browse(t, ctx, chromedp.Navigate(evil.URL))
	// The form's submission replaces the page; a wait that began on the
	// old page ends with its context and starts again on the new one.
	var err error
	for range 20 {
		if _, err = chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`location.href === %q && document.readyState === "complete"`, reset))); err == nil {
			break
		}
	}
	require.NoError(t, err)
	text := mustEval[string](t, ctx, `document.body.innerText`)
	assert.Contains(t, text, "cross_origin", "the form's POST was refused")
	// A reset or a DELETE would have emptied the rules.
	assert.Len(t, f.engine.Faults().Rules(), 1, "a page of another site changed the fake")
}

// testConsoleAdminToken opens the console of a fake that requires the
// admin token, given as a browser gives it after its prompt (HTTP Basic),
// and uses a control.
func testConsoleAdminToken(t *testing.T, b *browser) {
	const tok = "console-admin-token"
	f := newConsoleFake(t, "-admin-token", tok)
	anon, _ := b.tab(t)
	_, err := chromedp.Run(anon, chromedp.NavigateResponse(f.url+"/_fakepay/"))
	require.Error(t, err, "no token, no console")
	assert.Contains(t, err.Error(), "ERR_INVALID_AUTH_CREDENTIALS", "the browser was asked for credentials")

	ctx, dlg := b.tab(t)
	withToken := strings.Replace(f.url, "http://", "http://dev:"+tok+"@", 1)
	browse(t, ctx,
		chromedp.Navigate(withToken+"/_fakepay/"),
		waitJS(`document.getElementById('live').textContent === 'live'`),
		chromedp.SetValue(chromedp.ID("clock-advance"), "1h"),
		chromedp.Click(chromedp.ID("clock-advance-btn")),
		waitJS(`document.getElementById('message').textContent.startsWith('clock now')`),
	)
	assert.Len(t, dlg.all(), 1, "the control asked first")
}

// testConsoleWebhooks opens a charge with a webhook_url: its delivery and
// the receiver's answer are shown, and Resend (confirmed) makes another.
func testConsoleWebhooks(t *testing.T, b *browser) {
	f := newConsoleFake(t)
	got := make(chan struct{}, 8)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
		got <- struct{}{}
	}))
	t.Cleanup(hook.Close)
	req := chargeRequest()
	req.WebhookURL = hook.URL + "/hooks/a55"
	key, err := payonce.NewKey(f.engine.Clock().Now(), "console-webhook-order-1")
	require.NoError(t, err)
	ch, err := f.a55Client(t).Charges.Create(context.Background(), req, payonce.WithKey(key))
	require.NoError(t, err)
	<-got
	row := f.engine.Operations(fakeserver.OpFilter{Key: "console-webhook-order-1"}).Operations
	require.Len(t, row, 1)

	ctx, dlg := b.tab(t)
	browse(t, ctx,
		chromedp.Navigate(fmt.Sprintf("%s/_fakepay/#/op/%d", f.url, row[0].ID)),
		waitJS(`document.querySelectorAll('#d-webhooks table.deliveries tbody tr').length === 1 && document.getElementById('d-webhooks').innerText.includes('→ 204')`),
	)
	assert.Contains(t, mustEval[string](t, ctx, `document.getElementById('d-webhooks').innerText`), ch.UUID)
	browse(t, ctx,
		chromedp.Click(chromedp.CSS(`#d-webhooks button.resend`)),
		waitJS(`document.querySelectorAll('#d-webhooks table.deliveries tbody tr').length === 2`),
	)
	<-got
	require.Len(t, dlg.all(), 1)
	assert.Contains(t, dlg.all()[0], "Send a new webhook for "+ch.UUID)
	b.screenshot(t, ctx, "webhooks")
}

// hookReceiver is a merchant's webhook endpoint: it hands each delivery's
// body over.
func hookReceiver(t *testing.T) (url string, got <-chan map[string]any) {
	t.Helper()
	ch := make(chan map[string]any, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.WriteHeader(http.StatusNoContent)
		ch <- body
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/hooks/a55", ch
}

// recvHook waits for the receiver's next webhook.
func recvHook(t *testing.T, got <-chan map[string]any) map[string]any {
	t.Helper()
	select {
	case body := <-got:
		return body
	case <-time.After(30 * time.Second): // only guards a bug
		t.Fatal("no webhook came")
		return nil
	}
}

// rawCharge creates an A55 charge in the reference's body over HTTP, as a
// merchant in any language would, under key; it returns the answer.
func (f *consoleFake) rawCharge(t *testing.T, key string, extra map[string]any) map[string]any {
	t.Helper()
	status, out := f.sendCharge(t, key, extra)
	require.Equal(t, http.StatusOK, status, "%v", out)
	return out
}

// sendCharge is rawCharge, whatever the answer's status.
func (f *consoleFake) sendCharge(t *testing.T, key string, extra map[string]any) (int, map[string]any) {
	t.Helper()
	wallet, merchant := demoAccount(t, f.url)
	body := map[string]any{
		"wallet_uuid": wallet, "merchant_id": merchant, "payer_name": "João Silva", "payer_email": "joao@example.com",
		"payer_tax_id": "39999999999", "payer_cell_phone": "+5511988887777", "installment_value": 150, "installment_count": 1,
		"currency": "BRL", "due_date": f.engine.Clock().Now().AddDate(0, 1, 0).Format("2006-01-02"), "description": "order 9",
		"payer_address": map[string]any{"street": "Av. Paulista", "city": "São Paulo", "state": "SP", "postal_code": "01310-100"},
	}
	for k, v := range extra {
		body[k] = v
	}
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, f.url+chargePath, strings.NewReader(string(b)))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+f.a55Token(t))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(corekit.HeaderIdempotencyKey, key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

// testConsoleAnswers: an attempt answered with an injected A55 code shows
// the code where a fault would show.
func testConsoleAnswers(t *testing.T, b *browser) {
	f := newConsoleFake(t, "-a55-answer", `{"code":"DUPLICATE_REQUEST","nth":2}`)
	const key = "console-duplicate-0001"
	f.rawCharge(t, key, map[string]any{"type_charge": "pix"})
	status, out := f.sendCharge(t, key, map[string]any{"type_charge": "pix"})
	require.Equal(t, http.StatusConflict, status, "%v", out)
	row := f.engine.Operations(fakeserver.OpFilter{Key: key}).Operations
	require.Len(t, row, 1)
	ctx, _ := b.tab(t)
	browse(t, ctx,
		chromedp.Navigate(fmt.Sprintf("%s/_fakepay/#/op/%d", f.url, row[0].ID)),
		waitJS(`document.querySelectorAll('#d-attempts tbody tr.attempt').length === 2`),
	)
	faults := mustEval[[]string](t, ctx, `Array.from(document.querySelectorAll('#d-attempts td.fault')).map(td => td.textContent)`)
	assert.Equal(t, []string{"none", "DUPLICATE_REQUEST"}, faults)
	b.screenshot(t, ctx, "operation-answer")
}

// testConsoleLifecycle opens a PIX charge on the console: one click on
// pix.paid (no dialog) pays it, the merchant's receiver gets the signed
// webhook, and the page shows the new status and what the charge takes
// next.
func testConsoleLifecycle(t *testing.T, b *browser) {
	f := newConsoleFake(t)
	hook, got := hookReceiver(t)
	ch := f.rawCharge(t, "console-pix-order-0001", map[string]any{"type_charge": "pix", "webhook_url": hook})
	assert.Equal(t, "issued", recvHook(t, got)["status"])
	row := f.engine.Operations(fakeserver.OpFilter{Key: "console-pix-order-0001"}).Operations
	require.Len(t, row, 1)

	ctx, dlg := b.tab(t)
	// The payer's page shows the QR code (a data: image the page's policy
	// lets in) and the copy-and-paste string.
	browse(t, ctx,
		chromedp.Navigate(ch["charge_payment_url"].(string)),
		waitJS(`document.getElementById('qr').complete && document.getElementById('qr').naturalWidth === 25`),
	)
	assert.True(t, strings.HasPrefix(mustEval[string](t, ctx, `document.getElementById('copy-paste').textContent`), "000201"))
	b.screenshot(t, ctx, "pix-page")
	browse(t, ctx,
		chromedp.Navigate(fmt.Sprintf("%s/_fakepay/#/op/%d", f.url, row[0].ID)),
		waitJS(`document.querySelector('#d-webhooks button[data-event="pix.paid"]') !== null`),
	)
	assert.Equal(t, "issued", mustEval[string](t, ctx, `document.querySelector('#d-webhooks .charge-status').textContent`))
	b.screenshot(t, ctx, "lifecycle-issued")
	browse(t, ctx,
		chromedp.Click(chromedp.CSS(`#d-webhooks button[data-event="pix.paid"]`)),
		waitJS(`document.querySelector('#d-webhooks .charge-status') !== null && document.querySelector('#d-webhooks .charge-status').textContent === 'paid'`),
	)
	body := recvHook(t, got)
	assert.Equal(t, "paid", body["status"])
	assert.Equal(t, ch["charge_uuid"], body["charge_uuid"])
	assert.Empty(t, dlg.all(), "one click, no dialog")
	events := mustEval[[]string](t, ctx, `Array.from(document.querySelectorAll('#d-webhooks button.event')).map(b => b.dataset.event)`)
	assert.Equal(t, []string{"refund", "refund.failed"}, events, "a paid PIX takes a refund (which may fail), no chargeback")
	b.screenshot(t, ctx, "lifecycle-paid")
}

// testThreeDSChallengePage follows a 3DS charge's url_3ds to the fake's
// challenge page: one click authenticates, the charge is confirmed and
// its webhook sent, and the page offers the way back to redirect_url.
func testThreeDSChallengePage(t *testing.T, b *browser) {
	f := newConsoleFake(t)
	hook, got := hookReceiver(t)
	ch := f.rawCharge(t, "console-3ds-order-0001", map[string]any{"type_charge": "credit_card", "webhook_url": hook,
		"card_number": "4024007153763191", "card_name": "MARIA SILVA", "card_expiry_month": "12", "card_expiry_year": "2035",
		"card_cvv": "123", "threeds_authentication": true, "device_info": map[string]any{"ip_address": "192.0.2.1"},
		"redirect_url": "https://shop.example/return"})
	require.Equal(t, "pending", ch["status"])
	assert.Equal(t, "pending", recvHook(t, got)["status"])

	ctx, dlg := b.tab(t)
	browse(t, ctx,
		chromedp.Navigate(ch["url_3ds"].(string)),
		waitJS(`document.getElementById('ev-3ds-completed') !== null`),
	)
	b.screenshot(t, ctx, "3ds-challenge")
	browse(t, ctx,
		chromedp.Click(chromedp.ID("ev-3ds-completed")),
		waitJS(`document.getElementById('status').textContent === 'confirmed'`),
		waitJS(`document.getElementById('back').hidden === false`),
	)
	assert.Equal(t, "confirmed", recvHook(t, got)["status"])
	assert.Equal(t, "https://shop.example/return", mustEval[string](t, ctx, `document.querySelector('#back a').href`))
	assert.Empty(t, dlg.all())
	b.screenshot(t, ctx, "3ds-confirmed")
}
