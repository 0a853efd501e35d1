package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/sqlitejournal"
)

// CompareConfig is one measurement of what a journal costs: the same
// operations at the same concurrency with no journal, the SQLite journal
// (synchronous=FULL, the default, and synchronous=NORMAL) and, when
// PostgresURL is set, the PostgreSQL journal.
type CompareConfig struct {
	Operations  int
	Concurrency int
	// PostgresURL is the PostgreSQL database ("" leaves PostgreSQL out).
	// Without a pool_max_conns parameter the pool gets Concurrency
	// connections, so that the journal runs at the same concurrency.
	PostgresURL string
	Seed        uint64
	Latency     time.Duration // the fakes' answer time, as a provider's (0: none)
}

// JournalFigure is one backend's throughput.
type JournalFigure struct {
	Journal      string        `json:"journal"` // "none", "sqlite", "sqlite-normal" (WithSynchronousNormal), "postgres"
	Operations   int           `json:"operations"`
	Elapsed      time.Duration `json:"elapsed_ns"`
	OpsPerSecond float64       `json:"ops_per_second"`
	Ratio        float64       `json:"ratio"` // of the no-journal figure
}

// Comparison is CompareJournals' result.
type Comparison struct {
	Concurrency int             `json:"concurrency"`
	Latency     time.Duration   `json:"latency_ns"`
	Figures     []JournalFigure `json:"figures"`
}

// journalGoal is the share of the no-journal throughput a journal keeps.
const journalGoal = 0.5

// Passed reports whether every journal kept at least half the throughput
// of no journal.
func (c *Comparison) Passed() bool {
	for _, f := range c.Figures {
		if f.Ratio < journalGoal {
			return false
		}
	}
	return len(c.Figures) > 0
}

// ResultLine is the comparison's last line.
func (c *Comparison) ResultLine() string {
	parts := []string{"RESULT"}
	for _, f := range c.Figures {
		parts = append(parts, fmt.Sprintf("%s=%.0f", f.Journal, f.OpsPerSecond))
	}
	return strings.Join(parts, " ") + fmt.Sprintf(" goal_met=%t", c.Passed())
}

// WriteText prints the figures as a table; its last line is ResultLine.
func (c *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "payonce journal cost: the same operations at concurrency %d, server latency %v, no faults (goal: each journal keeps at least %.0f%% of no journal)\n\n",
		c.Concurrency, c.Latency, journalGoal*100)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "journal\toperations\telapsed\tops/s\tof none\t")
	for _, f := range c.Figures {
		fmt.Fprintf(tw, "%s\t%d\t%v\t%.0f\t%.0f%%\t\n", f.Journal, f.Operations, f.Elapsed.Round(time.Millisecond), f.OpsPerSecond, f.Ratio*100)
	}
	_ = tw.Flush()
	b.WriteString(c.ResultLine() + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// CompareJournals runs cfg.Operations operations of the crash run's plan
// (A55 card charges, Coinepay issues and recharges) in this process, once
// per backend, each on fresh fakes and a fresh journal, and reports the
// operations per second of each.
func CompareJournals(ctx context.Context, cfg CompareConfig) (*Comparison, error) {
	if cfg.Operations < 1 || cfg.Concurrency < 1 {
		return nil, errors.New("chaos: compare needs at least one operation and one in flight")
	}
	if cfg.Latency < 0 {
		return nil, errors.New("chaos: compare -latency must not be negative")
	}
	backends := []string{"none", "sqlite", "sqlite-normal"}
	if cfg.PostgresURL != "" {
		backends = append(backends, "postgres")
	}
	if cfg.PostgresURL != "" && !strings.Contains(cfg.PostgresURL, "pool_max_conns=") {
		sep := "?"
		if strings.Contains(cfg.PostgresURL, "?") {
			sep = "&"
		}
		cfg.PostgresURL += sep + "pool_max_conns=" + strconv.Itoa(cfg.Concurrency)
	}
	out := &Comparison{Concurrency: cfg.Concurrency, Latency: cfg.Latency}
	for _, b := range backends {
		f, err := measureJournal(ctx, cfg, b)
		if err != nil {
			return nil, fmt.Errorf("chaos: measure %s: %w", b, err)
		}
		if len(out.Figures) > 0 && out.Figures[0].OpsPerSecond > 0 {
			f.Ratio = f.OpsPerSecond / out.Figures[0].OpsPerSecond
		} else {
			f.Ratio = 1
		}
		out.Figures = append(out.Figures, f)
	}
	return out, nil
}

func measureJournal(ctx context.Context, cfg CompareConfig, backend string) (JournalFigure, error) {
	ccfg := DefaultCrashConfig()
	ccfg.Seed = cfg.Seed
	r := &crashRun{cfg: ccfg, latency: cfg.Latency}
	r.startFakes()
	defer r.closeFakes()
	if _, err := r.setup(ctx); err != nil {
		return JournalFigure{}, err
	}
	var j journal.Store
	if backend != "none" {
		spec := ""
		if backend == "postgres" {
			spec = cfg.PostgresURL
		}
		jr, err := prepareJournal(ctx, spec)
		if err != nil {
			return JournalFigure{}, err
		}
		defer jr.cleanup()
		var sqliteOpts []sqlitejournal.Option
		if backend == "sqlite-normal" {
			sqliteOpts = append(sqliteOpts, sqlitejournal.WithSynchronousNormal())
		}
		jj, closeJ, err := openJournal(ctx, jr.dsn, jr.schema, sqliteOpts...)
		if err != nil {
			return JournalFigure{}, err
		}
		defer closeJ()
		j = jj
	}
	cc, err := newCrashClients(r.wcfg, j, nil)
	if err != nil {
		return JournalFigure{}, err
	}
	plan := buildPlan(cfg.Operations, cfg.Seed)
	var failed atomic.Int64
	var firstErr atomic.Value
	start := time.Now()
	pool(cfg.Concurrency, plan, func(it planItem) {
		_, err := cc.execute(ctx, it)
		if err != nil && it.work != workDeclined {
			if failed.Add(1) == 1 {
				firstErr.Store(err)
			}
		}
	})
	elapsed := time.Since(start)
	if n := failed.Load(); n > 0 {
		return JournalFigure{}, fmt.Errorf("%d operations failed, first: %v", n, firstErr.Load())
	}
	return JournalFigure{Journal: backend, Operations: len(plan), Elapsed: elapsed,
		OpsPerSecond: float64(len(plan)) / max(elapsed.Seconds(), 1e-9)}, nil
}
