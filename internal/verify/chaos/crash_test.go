package chaos

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/journal"
)

// TestMain makes the test binary a crash-run worker when the parent
// re-executes it with WorkerEnv=1 (the helper-process pattern).
func TestMain(m *testing.M) {
	if os.Getenv(WorkerEnv) == "1" {
		var wrap func(journal.Store) journal.Store
		if os.Getenv(amnesiacEnv) == "1" {
			wrap = func(j journal.Store) journal.Store { return amnesiacJournal{j} }
		}
		if os.Getenv(unfencedEnv) == "1" {
			wrap = func(j journal.Store) journal.Store { return unfencedJournal{j} }
		}
		if os.Getenv(racyEnv) == "1" {
			wrap = func(j journal.Store) journal.Store { return racyJournal{j} }
		}
		os.Exit(workerMain(context.Background(), os.Stdin, os.Stdout, wrap))
	}
	os.Exit(m.Run())
}

// crashTestConfig is a bounded crash run for go test -race: a second
// or two, a fixed seed, distinct secrets (finding one is a leak). Its
// flip and second-merchant rates are above the default run's, so that
// a plan of 30 references goes through every edge crashCoverage counts,
// nearly always in one run.
func crashTestConfig(t *testing.T) CrashConfig {
	cfg := DefaultCrashConfig()
	cfg.References, cfg.Workers, cfg.Seed = 30, 3, 7
	cfg.KillRate, cfg.LateRate = 0.1, 0.6
	cfg.FlipRate, cfg.OtherMerchantRate, cfg.LookAlikeRate = 0.1, 0.2, 0.15
	// A reference another worker holds is delivered again soon: a lease
	// a killed worker left lasts crashLease.
	cfg.LeasedRetry = 2 * crashLease
	cfg.A55ClientSecret, cfg.CoinepaySecret = "a55-secret-c4e81a", "coinepay-secret-5d93bf"
	cfg.Journal = filepath.Join(t.TempDir(), "journal.db")
	return cfg
}

// loggedText is rep's text form, logged.
func loggedText(t *testing.T, rep interface{ WriteText(io.Writer) error }) string {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, rep.WriteText(&out))
	t.Log("\n" + out.String())
	return out.String()
}

// workerWithEnv starts test workers with env set to 1.
func workerWithEnv(env string) func() (*exec.Cmd, error) {
	return func() (*exec.Cmd, error) {
		cmd, err := defaultWorkerCommand()
		if err == nil {
			cmd.Env = append(cmd.Env, env+"=1")
		}
		return cmd, err
	}
}

// assertCrashRunCorrect checks what every crash run must hold: it
// passed, nothing ran twice, was lost or misrecorded, and every count of
// the report agrees with the others.
func assertCrashRunCorrect(t *testing.T, rep *CrashReport) {
	t.Helper()
	out := loggedText(t, rep)
	assert.Zero(t, rep.Duplicates, "no reference may run twice")
	assert.Zero(t, rep.Lost, "no reference may be lost")
	assert.Zero(t, rep.SentWhenSettled, "a settled reference sends nothing")
	assert.Zero(t, rep.WorkerFailures, "no worker dies unplanned")
	assert.True(t, rep.Passed())
	assert.Equal(t, rep.InDoubt, rep.InDoubtExecuted+rep.InDoubtNotExecuted)
	assert.Equal(t, 2, rep.ClockSkews, "two worker slots run ahead")
	assert.Equal(t, rep.InDoubt, rep.InDoubtSettled, "every in-doubt entry is settled through the settle API")
	assert.Zero(t, rep.StaleSends)
	assert.Equal(t, rep.Operations, rep.Succeeded+rep.Failed+rep.InDoubt, "every reference has a journal entry")
	assert.Zero(t, rep.Misrecorded)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Regexp(t, `^RESULT operations=3\d attempts=\d+ crashes=\d+ redelivered=\d+ in_doubt=\d+ duplicates=0 lost=0 misrecorded=0$`, lines[len(lines)-1])
}

// crashCoverage is what a set of crash runs went through: the kinds of
// crash and redelivery the run exists for.
type crashCoverage struct {
	counts map[string]int // edge → how often the runs went through it
	phases map[string]int // kill phase → crashes there
}

// add counts rep's edges in.
func (c *crashCoverage) add(rep *CrashReport) {
	if c.counts == nil {
		c.counts, c.phases = map[string]int{}, map[string]int{}
	}
	for edge, n := range map[string]int{
		"crashes":                                rep.Crashes,
		"redeliveries":                           rep.Redelivered,
		"references at two workers at once":      rep.Dual,
		"killed references back after 25 h":      rep.Late,
		"revisits":                               rep.Revisited,
		"answers from the journal after 25 h":    rep.FromJournal,
		"in doubt past the key's window":         rep.InDoubt,
		"declined cards recorded failed":         rep.Failed,
		"keys answered a 4xx not kept, then 2xx": rep.Flipped,
		"a second merchant on the journal":       rep.SecondMerchant,
		"a charge's look-alike that never ran":   rep.LookAlikes,
	} {
		c.counts[edge] += n
	}
	for _, cr := range rep.CrashesAt {
		c.phases[cr.Cause] += cr.Count
	}
}

// missing names the edges no run went through. Kill phases are drawn at
// random: a short run may miss one of them, never most of them.
func (c *crashCoverage) missing() []string {
	var miss []string
	for edge, n := range c.counts {
		if n == 0 {
			miss = append(miss, edge)
		}
	}
	hit := 0
	for _, p := range []string{phaseReserve, phaseSend, phaseAnswer, phaseUpdate, phaseHold} {
		if c.phases[p] > 0 {
			hit++
		}
	}
	if hit < 3 {
		miss = append(miss, fmt.Sprintf("crashes at three phases or more (%v)", c.phases))
	}
	slices.Sort(miss)
	return miss
}

// maxCoverRuns bounds the runs runCrashCovering makes.
const maxCoverRuns = 4

// runCrashCovering runs the bounded crash run of newConfig and checks it
// (assertCrashRunCorrect, then check), then runs it again with the next
// seed while the runs together miss an edge, at most maxCoverRuns times.
// A seed fixes every kill decision, but not which phases each delivery
// reaches: that follows how workers and deliveries interleave, so one
// short run misses an edge now and then. Every run must be correct; the
// edges are asserted over all of them.
func runCrashCovering(t *testing.T, newConfig func() CrashConfig, check func(CrashConfig, *CrashReport)) {
	t.Helper()
	var cov crashCoverage
	for i := range maxCoverRuns {
		cfg := newConfig()
		cfg.Seed += uint64(i)
		rep, err := RunCrash(context.Background(), cfg)
		require.NoError(t, err)
		assertCrashRunCorrect(t, rep)
		check(cfg, rep)
		cov.add(rep)
		if len(cov.missing()) == 0 {
			return
		}
		t.Logf("run %d (seed %d) missed %v: running the next seed", i+1, cfg.Seed, cov.missing())
	}
	assert.Empty(t, cov.missing(), "%d crash runs together missed edges the run exists for", maxCoverRuns)
}

// TestCrashRunSQLite is the crash run's bounded twin: worker processes
// (this test binary) share a SQLite journal file while the parent kills
// them. Then no row of the journal may hold a card number, CVV, secret or
// token.
func TestCrashRunSQLite(t *testing.T) {
	t.Parallel()
	runCrashCovering(t, func() CrashConfig { return crashTestConfig(t) }, func(cfg CrashConfig, rep *CrashReport) {
		assert.Equal(t, "sqlite", rep.Journal)
		js, err := json.Marshal(rep)
		require.NoError(t, err)
		needles := []string{"4111111111111111", a55test.CardDeclined, `"` + crashCVV + `"`, "cvv=" + crashCVV,
			cfg.A55ClientSecret, cfg.CoinepaySecret, "a55tok_", "Bearer "}
		for _, bad := range needles {
			assert.NotContains(t, string(js), bad, "the report holds a secret")
		}
		rows := journalCells(t, cfg.Journal)
		require.NotEmpty(t, rows)
		charges := 0
		for _, cell := range rows {
			for _, bad := range needles {
				assert.NotContains(t, cell, bad, "a journal cell holds a secret")
			}
			if strings.Contains(cell, "charge_uuid") {
				charges++
			}
		}
		assert.Positive(t, charges, "the journal recorded card charges' results")
		// The PIX and 3DS references were run, executed and checked.
		flows := map[string]FlowCount{}
		for _, f := range rep.ByFlow {
			flows[f.Flow] = f
		}
		for _, f := range []string{flowCard, flowPix, flow3DS} {
			assert.Positive(t, flows[f].Count, f)
		}
		assert.Positive(t, flows[flowCard].Ledger)
		assert.Positive(t, flows[flowPix].Ledger+flows[flow3DS].Ledger, "a PIX or 3DS charge executed")
		assert.Zero(t, rep.FlowChecksFailed)
		assert.Positive(t, rep.LookAlikes, "a charge with a look-alike never run")
	})
}

// journalCells reads every column of every row of every table of the
// SQLite file at path, as text.
func journalCells(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	tables, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	require.NoError(t, err)
	var names []string
	for tables.Next() {
		var n string
		require.NoError(t, tables.Scan(&n))
		names = append(names, n)
	}
	require.NoError(t, tables.Err())
	require.NoError(t, tables.Close())
	require.NotEmpty(t, names)
	var cells []string
	for _, n := range names {
		rows, err := db.Query(`SELECT * FROM "` + strings.ReplaceAll(n, `"`, `""`) + `"`)
		require.NoError(t, err)
		cols, err := rows.Columns()
		require.NoError(t, err)
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			for _, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				cells = append(cells, fmt.Sprint(v))
			}
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
	}
	return cells
}

// TestCrashRunPostgres is the same run on a PostgreSQL journal, in a
// schema of its own that the run drops.
func TestCrashRunPostgres(t *testing.T) {
	t.Parallel()
	url := os.Getenv("PAYONCE_POSTGRES_URL")
	if url == "" {
		t.Skip("PAYONCE_POSTGRES_URL is not set: the crash run on PostgreSQL needs a database (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)")
	}
	newConfig := func() CrashConfig {
		cfg := crashTestConfig(t)
		cfg.Journal = url
		return cfg
	}
	runCrashCovering(t, newConfig, func(_ CrashConfig, rep *CrashReport) {
		assert.Equal(t, "postgres", rep.Journal)
	})
}

// amnesiacEnv makes a test worker's journal forget every entry.
const amnesiacEnv = "PAYONCE_CHAOS_TEST_AMNESIAC_JOURNAL"

// amnesiacJournal reserves every reference anew: a journal that lost its
// entries (or a merchant with no journal at all).
type amnesiacJournal struct{ journal.Store }

func (j amnesiacJournal) Reserve(ctx context.Context, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	stored, created, err := j.Store.Reserve(ctx, e)
	if err != nil || created || stored.Key == e.Key {
		return stored, created, err
	}
	e.Fence = stored.Fence
	return e, true, nil
}

// BeginAttempt forgets that the entry settled or was taken over.
func (j amnesiacJournal) BeginAttempt(ctx context.Context, r payonce.JournalEntry) (payonce.JournalEntry, error) {
	got, err := j.Store.BeginAttempt(ctx, r)
	if errors.Is(err, journal.ErrSettled) || errors.Is(err, payonce.ErrJournalFenced) {
		return got, nil
	}
	return got, err
}

func (j amnesiacJournal) Update(ctx context.Context, e payonce.JournalEntry) error {
	err := j.Store.Update(ctx, e)
	if errors.Is(err, journal.ErrSettled) || errors.Is(err, payonce.ErrJournalFenced) {
		return nil
	}
	return err
}

// The proof must fail when the journal does not hold: the same crashes
// with workers whose journal forgets entries execute references twice,
// and the run says so.
func TestCrashRunCatchesAJournalThatForgets(t *testing.T) {
	t.Parallel()
	cfg := crashTestConfig(t)
	cfg.References = 15
	cfg.WorkerCommand = workerWithEnv(amnesiacEnv)
	rep, err := RunCrash(context.Background(), cfg)
	require.NoError(t, err)
	out := loggedText(t, rep)
	assert.False(t, rep.Passed())
	assert.Positive(t, rep.Duplicates, "references executed again under new keys")
	assert.Contains(t, out, "problem: duplicate: order-")
	assert.Regexp(t, `duplicates=[1-9]\d* lost=\d+ misrecorded=\d+\n$`, out)
}

// unfencedEnv makes a test worker's journal keep no fences and no
// precedence, as the journal did before them.
const unfencedEnv = "PAYONCE_CHAOS_TEST_UNFENCED_JOURNAL"

// unfencedJournal lets every attempt go (a settled or taken-over entry is
// sent again), lands every write whatever its fence, and refuses a 2xx
// over a failed entry.
type unfencedJournal struct{ journal.Store }

func (j unfencedJournal) BeginAttempt(ctx context.Context, r payonce.JournalEntry) (payonce.JournalEntry, error) {
	got, err := j.Store.BeginAttempt(ctx, r)
	if errors.Is(err, journal.ErrSettled) || errors.Is(err, payonce.ErrJournalFenced) {
		return got, nil
	}
	return got, err
}

func (j unfencedJournal) Update(ctx context.Context, e payonce.JournalEntry) error {
	stored, err := j.Store.Get(ctx, e.Scope, e.Reference)
	if err != nil {
		return err
	}
	if stored.Settled() {
		return fmt.Errorf("update %q: %w", e.Reference, journal.ErrSettled)
	}
	e.Fence = stored.Fence
	return j.Store.Update(ctx, e)
}

// The stall edge must fail the proof when the journal keeps no fences:
// a stalled worker resumes after another took its reference over and
// sends again. The parent drives each stall by events (the worker's
// answer, the takeover's end), so every stall is taken over however
// loaded the machine; no server fault may leave a takeover in doubt.
func TestCrashRunCatchesAJournalWithoutFences(t *testing.T) {
	t.Parallel()
	cfg := crashTestConfig(t)
	cfg.References, cfg.FlipRate, cfg.StallRate, cfg.FaultRate = 20, 0.25, 0.1, 0
	cfg.WorkerCommand = workerWithEnv(unfencedEnv)
	rep, err := RunCrash(context.Background(), cfg)
	require.NoError(t, err)
	out := loggedText(t, rep)
	assert.False(t, rep.Passed())
	require.Positive(t, rep.Stalls)
	assert.Equal(t, rep.Stalls, rep.StallsTakenOver, "every stalled worker's reference is taken over while it is stopped")
	assert.GreaterOrEqual(t, rep.StaleSends, rep.Stalls, "every resumed worker sent under a taken-over entry")
	assert.Contains(t, out, "problem: stale send: ")
}

// racyEnv makes a test worker's journal race: the race detector in the
// worker (a -race test binary) finds a data race at its first Reserve.
const racyEnv = "PAYONCE_CHAOS_TEST_RACY_JOURNAL"

// racyJournal writes racyCount from two goroutines at every Reserve.
type racyJournal struct{ journal.Store }

var racyCount int

func (j racyJournal) Reserve(ctx context.Context, e payonce.JournalEntry) (payonce.JournalEntry, bool, error) {
	done := make(chan struct{})
	go func() { racyCount++; close(done) }()
	racyCount++
	<-done
	return j.Store.Reserve(ctx, e)
}

// A data race in a worker must fail the crash run under go test -race,
// as it fails any test: the workers run the SDK the run proves, and the
// race detector's report (and exit status 66) is its only sign.
func TestCrashRunCatchesAWorkerThatRaces(t *testing.T) {
	if !raceEnabled {
		t.Skip("needs -race")
	}
	t.Parallel()
	cfg := crashTestConfig(t)
	cfg.References, cfg.KillRate, cfg.HoldRate, cfg.StallRate = 10, 0, 0, 0
	cfg.WorkerCommand = workerWithEnv(racyEnv)
	rep, err := RunCrash(context.Background(), cfg)
	require.NoError(t, err)
	loggedText(t, rep)
	assert.False(t, rep.Passed(), "a worker that raced passed the run")
	assert.Positive(t, rep.WorkerFailures, "a worker that raced is a worker failure")
}

func TestCrashConfigValidate(t *testing.T) {
	for _, mutate := range []func(*CrashConfig){
		func(c *CrashConfig) { c.References = 0 },
		func(c *CrashConfig) { c.Workers = 0 },
		func(c *CrashConfig) { c.KillRate = 1.5 },
		func(c *CrashConfig) { c.DualRate = -0.1 },
		func(c *CrashConfig) { c.FaultRate = 0.9 },
		func(c *CrashConfig) { c.MaxKills = -1 },
		func(c *CrashConfig) { c.LeasedRetry = -time.Second },
	} {
		cfg := DefaultCrashConfig()
		mutate(&cfg)
		_, err := RunCrash(context.Background(), cfg)
		assert.Error(t, err)
	}
	assert.NoError(t, DefaultCrashConfig().Validate())
	assert.NoError(t, ShortCrashConfig().Validate())
}

func TestPlanReferencesRoundTrip(t *testing.T) {
	plan := buildPlan(200, 3)
	works := map[string]int{}
	for _, it := range plan {
		back, err := parseRef(it.ref)
		require.NoError(t, err)
		assert.Equal(t, it, back)
		works[it.work]++
	}
	for _, w := range []string{workCharge, workDeclined, workApply, workRecharge, workPix, work3DS} {
		assert.Positive(t, works[w], w)
	}
	assert.Equal(t, plan, buildPlan(200, 3), "same seed, same plan")
	for seed := range uint64(20) {
		short := buildPlan(ShortCrashConfig().References, seed)
		assert.True(t, slices.ContainsFunc(short, func(p planItem) bool { return p.work == workPix }), "a short plan has a PIX charge (seed %d)", seed)
		assert.True(t, slices.ContainsFunc(short, func(p planItem) bool { return p.work == work3DS }), "a short plan has a 3DS charge (seed %d)", seed)
	}
	for _, bad := range []string{"", "order-1", "order-x/charge", "order--1/charge", "order-1/refund", "x-1/charge"} {
		_, err := parseRef(bad)
		assert.Error(t, err, bad)
	}
}

// CompareJournals measures the same plan with no journal and each
// journal; it asserts what the figures are, not how fast they are.
func TestCompareJournals(t *testing.T) {
	t.Parallel()
	cfg := CompareConfig{Operations: 20, Concurrency: 4, Seed: 3, PostgresURL: os.Getenv("PAYONCE_POSTGRES_URL")}
	cmp, err := CompareJournals(context.Background(), cfg)
	require.NoError(t, err)
	want := []string{"none", "sqlite", "sqlite-normal"}
	if cfg.PostgresURL != "" {
		want = append(want, "postgres")
	}
	require.Len(t, cmp.Figures, len(want))
	for i, f := range cmp.Figures {
		assert.Equal(t, want[i], f.Journal)
		assert.Equal(t, cfg.Operations, f.Operations)
		assert.Positive(t, f.OpsPerSecond)
		assert.InDelta(t, f.OpsPerSecond/cmp.Figures[0].OpsPerSecond, f.Ratio, 1e-9)
	}
	var out bytes.Buffer
	require.NoError(t, cmp.WriteText(&out))
	assert.Regexp(t, `RESULT none=\d+ sqlite=\d+ .*goal_met=(true|false)\n$`, out.String())

	_, err = CompareJournals(context.Background(), CompareConfig{Operations: 0, Concurrency: 1})
	assert.Error(t, err)
}

func TestComparisonGoal(t *testing.T) {
	c := &Comparison{Figures: []JournalFigure{{Journal: "none", Ratio: 1}, {Journal: "sqlite", Ratio: 0.6}, {Journal: "postgres", Ratio: 0.5}}}
	assert.True(t, c.Passed())
	c.Figures[1].Ratio = 0.49
	assert.False(t, c.Passed(), "a journal below half of no journal misses the goal")
	assert.False(t, (&Comparison{}).Passed())
}

// Canceling the run (Ctrl-C) kills the workers and returns; it does not
// wait for the plan to finish.
func TestCrashRunCanceled(t *testing.T) {
	t.Parallel()
	cfg := crashTestConfig(t)
	cfg.References = 2000 // a minute's work at least: only a cancel ends it early
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Canceled at the run's first progress line, written once the plan is
	// built and phase 1 begins.
	phase1 := &firstWrite{done: make(chan struct{})}
	cfg.Progress = phase1
	go func() {
		select {
		case <-phase1.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	_, err := RunCrash(ctx, cfg)
	require.ErrorIs(t, err, context.Canceled)
}

// firstWrite is a progress writer that closes done at its first write.
type firstWrite struct {
	once sync.Once
	done chan struct{}
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.done) })
	return len(p), nil
}

// A worker that dies on its own (a panic, an exit) is no planned crash:
// the run says so and fails, even when a replacement settles the work.
func TestCrashRunWorkerDyingUnplannedFails(t *testing.T) {
	t.Parallel()
	cfg := crashTestConfig(t)
	cfg.References, cfg.KillRate, cfg.HoldRate = 10, 0, 0
	var started atomic.Int64
	cfg.WorkerCommand = func() (*exec.Cmd, error) {
		if started.Add(1) == 1 {
			// Ready, then gone at the first reference.
			return exec.Command("sh", "-c", `read cfg; echo ready; read job; echo "dying" >&2; exit 3`), nil
		}
		return defaultWorkerCommand()
	}
	rep, err := RunCrash(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.WorkerFailures)
	assert.Zero(t, rep.Duplicates)
	assert.Zero(t, rep.Lost, "the reference went to a replacement")
	assert.False(t, rep.Passed())
	require.NotEmpty(t, rep.Problems)
	assert.Contains(t, rep.Problems[0], "exited on its own")
	assert.Contains(t, rep.Problems[0], "dying")
}

// Workers that cannot run at all end the run with an error, not a loop.
func TestCrashRunWorkersThatCannotRun(t *testing.T) {
	t.Parallel()
	cfg := crashTestConfig(t)
	cfg.References = 30
	cfg.WorkerCommand = func() (*exec.Cmd, error) {
		return exec.Command("sh", "-c", `read cfg; echo ready; read job; exit 3`), nil
	}
	_, err := RunCrash(context.Background(), cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "workers failed unplanned")

	cfg.WorkerCommand = func() (*exec.Cmd, error) { return exec.Command("sh", "-c", `echo nonsense`), nil }
	_, err = RunCrash(context.Background(), cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "worker did not start")
}

// A worker that races fails the run through its report, also when the
// run kills workers as it does by default: each killed worker's race
// counts as an unplanned worker failure, and past maxWorkerFailures the
// run gave up with an error ("the last: %!w(<nil>)") instead of a report.
func TestCrashRunCatchesWorkersThatRaceUnderKills(t *testing.T) {
	if !raceEnabled {
		t.Skip("needs -race")
	}
	t.Parallel()
	cfg := crashTestConfig(t)
	cfg.StallRate = 0
	cfg.WorkerCommand = workerWithEnv(racyEnv)
	rep, err := RunCrash(context.Background(), cfg)
	require.NoError(t, err, "a racing SDK is a failed run, not one that could not take place")
	loggedText(t, rep)
	assert.False(t, rep.Passed(), "a worker that raced passed the run")
}
