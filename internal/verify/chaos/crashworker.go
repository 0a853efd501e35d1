package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
)

// WorkerEnv is the environment variable that starts a binary of the crash
// run (cmd/chaos, or a test binary through its TestMain) in worker mode:
// when it is set to "1" the program calls WorkerMain instead of its own
// main.
const WorkerEnv = "PAYONCE_CHAOS_WORKER"

// The phases at which a worker stops and waits for the parent's word: the
// parent answers "ack" or kills the worker there.
const (
	phaseReserve = "reserve" // before the journal records the reference
	phaseSend    = "send"    // journal written, before the request leaves
	phaseAnswer  = "answer"  // the server's answer arrived, journal not updated
	phaseUpdate  = "update"  // before the journal settles the entry
	phaseHold    = "hold"    // killed after acking send, while the fake holds the request
)

// Statuses a worker reports for one delivery of a reference.
const (
	statusOK      = "ok"      // executed now (or replayed by the server)
	statusJournal = "journal" // answered from the journal, nothing sent
	statusFailed  = "failed"  // final failure; the detail is its kind name
	statusUnknown = "unknown" // ErrOutcomeUnknown: in doubt, nothing sent
	// statusDoubtSent: ErrOutcomeUnknown after this delivery's own refused
	// attempt (an earlier run's attempt may still run): in doubt, sent.
	statusDoubtSent = "doubt_sent"
	statusTemporary = "temporary" // a temporary failure: the queue redelivers it
	statusConflict  = "conflict"  // ErrIdempotencyConflict: must never happen here
	// statusSkewedDoubt is the parent's name for an ErrOutcomeUnknown of
	// a worker whose clock runs ahead: no last word, the job goes on.
	statusSkewedDoubt = "skewed_doubt"
)

// workerConfig is the first line the parent writes to a worker: where the
// servers and the journal are, and the fakes' clock.
type workerConfig struct {
	A55URL          string        `json:"a55_url"`
	A55OtherURL     string        `json:"a55_other_url"` // the second merchant's origin
	OtherWallet     string        `json:"other_wallet"`
	OtherMerchant   string        `json:"other_merchant"` // the other wallet's merchant
	A55ClientID     string        `json:"a55_client_id"`
	A55ClientSecret string        `json:"a55_client_secret"`
	CoinepayURL     string        `json:"coinepay_url"`
	CoinepayKey     string        `json:"coinepay_key"`
	CoinepaySecret  string        `json:"coinepay_secret"`
	Journal         string        `json:"journal"` // SQLite file or postgres:// URL
	Schema          string        `json:"schema,omitempty"`
	ClockOffset     time.Duration `json:"clock_offset"` // the fakes' clock minus the local clock
	Wallet          string        `json:"wallet"`
	Merchant        string        `json:"merchant"` // the wallet's merchant
	Cards           []string      `json:"cards"`
	Sync            bool          `json:"sync"` // stop at every phase for the parent's word

	skewed bool // the parent's note: this slot's clock runs ahead
}

// worker is one worker process's state. It runs one reference at a time.
type worker struct {
	in  *bufio.Scanner
	out *bufio.Writer

	mu   sync.Mutex // guards out and the sync exchange
	sync bool
	ref  string // the reference in progress
	wrap func(journal.Store) journal.Store
}

// WorkerMain is the crash run's worker process: it reads its configuration
// and then references from in, runs each through the SDK with the shared
// journal, and reports on out. It returns the process's exit code. The
// parent may kill it at any moment; that is the point.
func WorkerMain(ctx context.Context, in io.Reader, out io.Writer) int {
	return workerMain(ctx, in, out, nil)
}

// workerMain is WorkerMain with a wrapper around the journal (tests break
// the journal with it, to see the proof fail).
func workerMain(ctx context.Context, in io.Reader, out io.Writer, wrap func(journal.Store) journal.Store) int {
	w := &worker{in: bufio.NewScanner(in), out: bufio.NewWriter(out), wrap: wrap}
	w.in.Buffer(make([]byte, 64<<10), 1<<20)
	if err := w.main(ctx); err != nil {
		w.send("fatal " + oneLine(err.Error()))
		return 1
	}
	return 0
}

func (w *worker) main(ctx context.Context) error {
	line, ok := w.read()
	cfgJSON, isCfg := strings.CutPrefix(line, "config ")
	if !ok || !isCfg {
		return errors.New("chaos worker: want a config line first")
	}
	var cfg workerConfig
	if err := json.Unmarshal([]byte(cfgJSON), &cfg); err != nil {
		return fmt.Errorf("chaos worker: config: %w", err)
	}
	w.sync = cfg.Sync
	j, closeJournal, err := openJournal(ctx, cfg.Journal, cfg.Schema)
	if err != nil {
		return err
	}
	defer closeJournal()
	if w.wrap != nil {
		j = w.wrap(j)
	}
	cc, err := newCrashClients(cfg, &syncJournal{Store: j, w: w}, func(next http.RoundTripper) http.RoundTripper {
		return &syncTransport{next: next, w: w}
	})
	if err != nil {
		return err
	}
	w.send("ready")
	for {
		line, ok := w.read()
		if !ok {
			return nil
		}
		ref, isJob := strings.CutPrefix(line, "job ")
		if !isJob {
			return fmt.Errorf("chaos worker: unexpected line %q", oneLine(line))
		}
		p, err := parseRef(ref)
		if err != nil {
			return err
		}
		w.mu.Lock()
		w.ref = ref
		w.mu.Unlock()
		res, err := cc.execute(ctx, p)
		w.send(doneLine(ref, res, err))
	}
}

// doneLine is the report of one delivery: "done <ref> <status> <detail>
// <attempts>". The detail is a resource ID or an error's kind name, never
// an error text (which could hold what a server echoed).
func doneLine(ref string, res outcome, err error) string {
	status, detail := statusOK, res.id
	switch {
	case err == nil && res.fromJournal:
		status = statusJournal
	case err == nil:
	case refusedInDoubt(err):
		// Sent and refused, but an earlier run's attempt may still run:
		// in doubt until settled, like any ErrOutcomeUnknown.
		status, detail = statusDoubtSent, "-"
	case errors.Is(err, payonce.ErrOutcomeUnknown):
		status, detail = statusUnknown, "-"
	case errors.Is(err, payonce.ErrIdempotencyConflict):
		status, detail = statusConflict, "-"
	case queueRetries(err):
		status, detail = statusTemporary, kindNameOf(err)
	default:
		status, detail = statusFailed, kindNameOf(err)
	}
	if detail == "" {
		detail = "-"
	}
	return fmt.Sprintf("done %s %s %s %d", ref, status, detail, res.attempts)
}

// refusedInDoubt reports an ErrOutcomeUnknown whose run sent an attempt
// and was refused while an earlier run's attempt may still execute.
func refusedInDoubt(err error) bool {
	return errors.Is(err, payonce.ErrOutcomeUnknown) && !errors.Is(err, payonce.ErrKeyExpired) && !errors.Is(err, payonce.ErrKeyCreatedInFuture)
}

// queueRetries reports whether a merchant's queue would run the job again
// later: a temporary failure, a journal that failed, a rate limit or an
// insufficient balance (the journal keeps such an entry pending).
func queueRetries(err error) bool {
	if payonce.IsTemporary(err) {
		return true
	}
	for _, k := range []error{payonce.ErrJournal, payonce.ErrRateLimited, coinepay.ErrInsufficientBalance, payonce.ErrKeyExpired} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

func kindNameOf(err error) string {
	var e *payonce.APIError
	if errors.As(err, &e) && e.Kind != nil {
		if n := payonce.KindName(e.Kind); n != "" {
			return n
		}
	}
	return "other"
}

// crashLease is the journal lease of the crash run's workers.
const crashLease = 20 * time.Millisecond

// newCrashClients builds the SDK clients as a merchant's process would,
// on the fakes' clock (cfg.ClockOffset), with journal j (nil: none) and
// wrap around each HTTP transport (nil: none).
func newCrashClients(cfg workerConfig, j journal.Store, wrap func(http.RoundTripper) http.RoundTripper) (*crashClients, error) {
	clock := func() time.Time { return time.Now().Add(cfg.ClockOffset) }
	p := DefaultConfig().Retry // fast retries: the faults are short
	// No bound on the time a run retries for (MaxAttempts and the key's
	// window bound it): a worker stopped past its lease retries after it
	// resumes however long the stop lasted, as a frozen process does.
	p.MaxElapsedTime = 0
	common := func(url string) []payonce.Option {
		hc := corekit.DefaultHTTPClient()
		if wrap != nil {
			hc.Transport = wrap(hc.Transport)
		}
		opts := []payonce.Option{payonce.WithBaseURL(url), payonce.WithRetryPolicy(p), payonce.WithHTTPClient(hc), payonce.WithClock(clock)}
		if j != nil {
			// Short leases: the run redelivers a crashed worker's jobs at
			// once, and a crashed run's lease would hold them back (the
			// fences, not the leases, keep a taken-over run from writing).
			opts = append(opts, payonce.WithJournal(j), payonce.WithJournalLease(crashLease))
		}
		return opts
	}
	auth := a55.Auth{ClientID: cfg.A55ClientID, ClientSecret: cfg.A55ClientSecret, TokenURL: cfg.A55URL + "/oauth2/token"}
	a, err := a55.NewClient(auth, common(cfg.A55URL)...)
	if err != nil {
		return nil, err
	}
	c, err := coinepay.NewClient(cfg.CoinepayKey, cfg.CoinepaySecret, common(cfg.CoinepayURL)...) // signs on the fakes' clock
	if err != nil {
		return nil, err
	}
	cc := &crashClients{a55: a, coinepay: c, wallet: cfg.Wallet, merchant: cfg.Merchant, wallet2: cfg.OtherWallet,
		merchant2: cfg.OtherMerchant, cards: cfg.Cards, journal: j != nil}
	if cfg.A55OtherURL != "" {
		auth2 := a55.Auth{ClientID: cfg.A55ClientID, ClientSecret: cfg.A55ClientSecret, TokenURL: cfg.A55OtherURL + "/oauth2/token"}
		if cc.a55Other, err = a55.NewClient(auth2, common(cfg.A55OtherURL)...); err != nil {
			return nil, err
		}
	}
	return cc, nil
}

func (w *worker) read() (string, bool) {
	if !w.in.Scan() {
		return "", false
	}
	return w.in.Text(), true
}

func (w *worker) send(line string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sendLocked(line)
}

func (w *worker) sendLocked(line string) {
	_, _ = w.out.WriteString(line + "\n")
	_ = w.out.Flush()
}

// syncPoint tells the parent the worker reached phase and waits for its
// ack; the parent may kill the process instead. Without the parent's
// answer (its end of the pipe closed) the worker stops there too.
func (w *worker) syncPoint(phase string) error {
	return w.syncPointKey(phase, "")
}

// syncPointKey is syncPoint naming the attempt's idempotency key too, so
// that the parent can set a fault rule for that key before the request
// leaves.
func (w *worker) syncPointKey(phase, key string) error {
	if !w.sync {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	line := "sync " + phase + " " + w.ref
	if key != "" && !strings.ContainsAny(key, " \n") {
		line += " " + key
	}
	w.sendLocked(line)
	line, ok := w.read()
	if !ok || line != "ack" {
		return fmt.Errorf("chaos worker: no ack at %s", phase)
	}
	return nil
}

// syncJournal stops at a sync point before the journal records or settles
// an entry.
type syncJournal struct {
	journal.Store
	w *worker
}

func (j *syncJournal) Reserve(ctx context.Context, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	if err := j.w.syncPoint(phaseReserve); err != nil {
		return payonce.JournalEntry{}, false, err
	}
	return j.Store.Reserve(ctx, e)
}

func (j *syncJournal) Update(ctx context.Context, e payonce.JournalEntry) error {
	if err := j.w.syncPoint(phaseUpdate); err != nil {
		return err
	}
	return j.Store.Update(ctx, e)
}

// syncTransport stops at a sync point before each API request leaves and
// after its answer arrives.
type syncTransport struct {
	next http.RoundTripper
	w    *worker
}

func (t *syncTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasPrefix(req.URL.Path, "/api/") {
		return t.next.RoundTrip(req)
	}
	if err := t.w.syncPointKey(phaseSend, req.Header.Get(corekit.HeaderIdempotencyKey)); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if err := t.w.syncPoint(phaseAnswer); err != nil {
		_ = resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// CloseIdleConnections reaches the wrapped transport.
func (t *syncTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// oneLine keeps a message on one line for the pipe protocol.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// doneReport is a parsed "done" line.
type doneReport struct {
	ref, status, detail string
	attempts            int
}

func parseDone(line string) (doneReport, bool) {
	f := strings.Fields(line)
	if len(f) != 5 || f[0] != "done" {
		return doneReport{}, false
	}
	n, err := strconv.Atoi(f[4])
	if err != nil {
		return doneReport{}, false
	}
	return doneReport{ref: f[1], status: f[2], detail: f[3], attempts: n}, true
}

// inDoubt reports a delivery that ended in doubt (ErrOutcomeUnknown),
// whether or not it sent an attempt itself.
func inDoubt(status string) bool { return status == statusUnknown || status == statusDoubtSent }
