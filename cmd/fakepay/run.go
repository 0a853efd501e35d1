package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/payonce/payonce/internal/fake/a55fake"
	"github.com/payonce/payonce/internal/fake/coinepayfake"
	"github.com/payonce/payonce/internal/fake/fakeserver"
	"github.com/payonce/payonce/internal/loopback"
)

// options are the command-line flags.
type options struct {
	addr                 string
	a55ID, a55Secret     string
	cpKey, cpSecret      string
	balance              string
	latency              time.Duration
	faultRate            float64
	seed                 uint64
	seeded               bool // -seed was given
	rateLimit            int
	tokenLifetime        time.Duration
	shutdownGraceTimeout time.Duration
	maxOperations        int
	readTimeout          time.Duration
	idleTimeout          time.Duration
	webhookSecret        string
	webhookAnyHost       bool
	allowRemote          bool
	adminToken           string
	webhookAllowSelf     bool
	a55Answers           answerFlag
}

// answerFlag collects -a55-answer: each an A55 answer rule in the JSON
// form of POST /_fakepay/a55/answers, checked as it is read.
type answerFlag []a55fake.AnswerRule

func (a *answerFlag) String() string {
	if a == nil || len(*a) == 0 {
		return ""
	}
	b, _ := json.Marshal([]a55fake.AnswerRule(*a))
	return string(b)
}

func (a *answerFlag) Set(s string) error {
	var r a55fake.AnswerRule
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return fmt.Errorf(`want a rule such as {"code":"TIMEOUT","executed":true,"probability":0.05}: %w`, err)
	}
	if err := r.Validate(); err != nil {
		return err
	}
	*a = append(*a, r)
	return nil
}

func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("fakepay", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen address (port 0 picks a free port)")
	fs.StringVar(&o.a55ID, "a55-client-id", "demo-client", "A55 OAuth2 client id")
	fs.StringVar(&o.a55Secret, "a55-client-secret", "demo-secret", "A55 OAuth2 client secret")
	fs.StringVar(&o.cpKey, "coinepay-key", "demo-key", "Coinepay API key id")
	fs.StringVar(&o.cpSecret, "coinepay-secret", "demo-secret", "Coinepay API secret")
	fs.StringVar(&o.balance, "balance", "1000.00", "starting Coinepay balance")
	fs.DurationVar(&o.latency, "latency", 0, "delay added before every API request")
	fs.Float64Var(&o.faultRate, "fault-rate", 0, "share (0..1) of API requests that get a random fault")
	fs.Uint64Var(&o.seed, "seed", 0, "seed of faults and generated IDs, for a reproducible run (default: a random seed, printed at start)")
	fs.IntVar(&o.rateLimit, "a55-rate-limit", 100, "A55 requests per minute per client (0 or negative: off)")
	fs.DurationVar(&o.tokenLifetime, "a55-token-lifetime", time.Hour, "A55 access token lifetime")
	fs.StringVar(&o.webhookSecret, "a55-webhook-secret", a55fake.DefaultWebhookSecret, "secret that signs the A55 charge webhooks")
	fs.BoolVar(&o.webhookAnyHost, "a55-webhook-any-host", false, "also deliver A55 webhooks to non-loopback hosts (default: loopback only)")
	fs.BoolVar(&o.webhookAllowSelf, "a55-webhook-allow-self", false, "also deliver A55 webhooks to fakepay's own listener (never to its admin API)")
	fs.DurationVar(&o.shutdownGraceTimeout, "shutdown-timeout", 5*time.Second, "grace period on SIGINT/SIGTERM")
	fs.IntVar(&o.maxOperations, "max-operations", 0, "keep at most N ledger operations and N full stored answers per provider (0: no cap)")
	fs.DurationVar(&o.readTimeout, "read-timeout", time.Minute, "longest time to read one request, body included (also ends hang and delay faults)")
	fs.DurationVar(&o.idleTimeout, "idle-timeout", 2*time.Minute, "longest time an idle keep-alive connection stays open")
	fs.BoolVar(&o.allowRemote, "allow-remote", false, "allow a listen address other machines can reach (requires an admin token)")
	fs.Var(&o.a55Answers, "a55-answer", `A55 answer rule in force from the start and after every reset, as the JSON of POST /_fakepay/a55/answers `+
		`(repeatable), e.g. {"code":"TIMEOUT","executed":true,"probability":0.05}`)
	fs.StringVar(&o.adminToken, "admin-token", "", "token every admin call and the console must carry (default: $"+fakeserver.AdminTokenEnv+")")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.adminToken == "" {
		o.adminToken = os.Getenv(fakeserver.AdminTokenEnv)
	}
	fs.Visit(func(f *flag.Flag) { o.seeded = o.seeded || f.Name == "seed" })
	return o, o.validate()
}

// validate refuses every flag value fakepay cannot run with, naming the
// flag, before anything listens.
func (o options) validate() error {
	switch {
	case !(o.faultRate >= 0 && o.faultRate <= 1): // NaN too
		return errors.New("-fault-rate must be within 0..1")
	case o.latency < 0:
		return errors.New("-latency must not be negative")
	case o.tokenLifetime <= 0:
		return errors.New("-a55-token-lifetime must be positive")
	case o.maxOperations < 0:
		return errors.New("-max-operations must not be negative")
	case o.shutdownGraceTimeout < 0:
		return errors.New("-shutdown-timeout must not be negative")
	case o.readTimeout <= 0 || o.idleTimeout <= 0:
		return errors.New("-read-timeout and -idle-timeout must be positive")
	case o.a55ID == "", o.a55Secret == "":
		return errors.New("-a55-client-id and -a55-client-secret must not be empty")
	case o.cpKey == "", o.cpSecret == "":
		return errors.New("-coinepay-key and -coinepay-secret must not be empty")
	case o.webhookSecret == "":
		return errors.New("-a55-webhook-secret must not be empty")
	case !validHostPort(o.addr):
		return fmt.Errorf("-addr %s: want host:port, such as 127.0.0.1:8080 or [::1]:0", o.addr)
	case o.allowRemote && o.adminToken == "":
		return errors.New("-allow-remote requires an admin token: -admin-token or " + fakeserver.AdminTokenEnv)
	case !o.allowRemote && !loopback.ListenAddr(o.addr):
		return fmt.Errorf("-addr %s: other machines could reach it and the admin API resets, reads and steers the fake; "+
			"listen on a loopback address (127.0.0.1:8080) or add -allow-remote with an admin token", o.addr)
	}
	if _, err := fakeserver.ParseDecimal(o.balance); err != nil {
		return fmt.Errorf("-balance: %w", err)
	}
	return nil
}

// newHandler builds both fakes and the admin API on one engine.
func newHandler(o options) (http.Handler, *fakeserver.Engine, error) {
	bal, err := fakeserver.ParseDecimal(o.balance)
	if err != nil {
		return nil, nil, fmt.Errorf("-balance: %w", err)
	}
	e := fakeserver.New(fakeserver.Options{Seed: o.seed, Seeded: o.seeded, FaultRate: o.faultRate, Latency: o.latency, MaxOperations: o.maxOperations})
	rateLimit := o.rateLimit
	if rateLimit == 0 {
		rateLimit = -1 // off, as a55test.WithRateLimit(0, ..): a55fake reads 0 as its default
	}
	a55 := a55fake.New(e, a55fake.Config{
		Clients: map[string]string{o.a55ID: o.a55Secret}, RateLimit: rateLimit, TokenLifetime: o.tokenLifetime,
		WebhookSecret: o.webhookSecret, WebhookAllowAnyHost: o.webhookAnyHost, WebhookAllowSelf: o.webhookAllowSelf,
		Answers: o.a55Answers,
	})
	cp := coinepayfake.New(e, coinepayfake.Config{Keys: map[string]string{o.cpKey: o.cpSecret}, StartBalance: &bal})
	a55h, cph := a55.Handler(), cp.Handler()
	admin := e.AdminHandler(fakeserver.AdminConfig{
		SetBalance: cp.SetBalance, Provider: a55.AdminHandler,
		Webhooks: func(chargeUUID string) any { return a55.WebhookDeliveries(chargeUUID) },
		Token:    o.adminToken, AllowRemote: o.allowRemote,
	})
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case a55fake.Owns(r.URL.Path):
			a55h.ServeHTTP(w, r)
		case coinepayfake.Owns(r.URL.Path):
			cph.ServeHTTP(w, r)
		default:
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Header().Set("Date", e.Clock().Now().UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"code":"NOT_FOUND","message":"unknown path"}}`)
		}
	})
	return fakeserver.WithAdmin(admin, api), e, nil
}

// run serves until ctx ends, then shuts down gracefully. It prints
// "fakepay listening on http://HOST:PORT" once the listener is bound, then
// the seed in use; ready, when not nil, is then called with the address
// it listens on. With -h or -help it prints the usage and returns nil.
func run(ctx context.Context, args []string, stdout io.Writer, ready func(net.Addr)) error {
	o, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil // -h or -help: the usage is printed, which is success
	}
	if err != nil {
		return err
	}
	h, e, err := newHandler(o)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	if !o.allowRemote && !loopback.Listener(ln.Addr()) {
		// A host name that resolved to another interface.
		_ = ln.Close()
		return fmt.Errorf("-addr %s listens on %s, which other machines can reach: use a loopback address or -allow-remote with an admin token",
			o.addr, ln.Addr())
	}
	e.AddListenAddr(ln.Addr()) // no webhook delivery aims at fakepay itself
	var conns connTracker
	srv := &http.Server{Handler: h, ConnState: conns.hook}
	fakeserver.Harden(srv)
	srv.ReadTimeout, srv.IdleTimeout = o.readTimeout, o.idleTimeout
	fmt.Fprintf(stdout, "fakepay listening on http://%s\n", ln.Addr().String())
	if !loopback.Listener(ln.Addr()) {
		fmt.Fprintf(stdout, "fakepay: warning: %s is reachable from other machines; every admin call and the console need the admin token\n", ln.Addr())
	}
	fmt.Fprintf(stdout, "fakepay seed %d (-seed %d replays these IDs and faults)\n", e.Seed(), e.Seed())
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(conns.listener(ln)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	e.Close() // ends hanging and delayed requests
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownGraceTimeout)
	defer cancel()
	shutc := make(chan error, 1)
	go func() { shutc <- srv.Shutdown(sctx) }()
	// Serve returns once Shutdown has closed the listener; every
	// connection it accepted has been reported to the tracker by then.
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	conns.closeSilent()
	if err := <-shutc; err != nil {
		if !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		// The grace period is over: a client still sending its request
		// (or not reading its answer) is cut off, and that is no failure.
		if err := srv.Close(); err != nil {
			return err
		}
	}
	return nil
}

// validHostPort reports whether addr has the host:port shape net.Listen
// wants (the host may be empty).
func validHostPort(addr string) bool {
	_, _, err := net.SplitHostPort(addr)
	return err == nil
}
