package journal_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/payoncetest"
)

// addRoughFaults adds, with add, faults at path that lose two answers,
// answer 503 to three requests in ten and reset two in ten.
func addRoughFaults(t *testing.T, add func(payoncetest.Rule) error, path string) {
	t.Helper()
	for _, f := range []payoncetest.Rule{
		{Fault: payoncetest.FaultDropAfterCommit, Path: path, Count: 2},
		{Fault: payoncetest.FaultErrorBeforeCommit, Path: path, Status: 503, Probability: 0.3},
		{Fault: payoncetest.FaultResetBeforeRead, Path: path, Probability: 0.2},
	} {
		require.NoError(t, add(f))
	}
}

// Many goroutines, each with its own client and its own journal handle
// (for SQLite, its own connection pool on the shared file, as a process
// would have), call one reference at once while the fake loses answers,
// answers 503 and resets connections: the charge is executed once and
// every caller that gets a result gets that one charge.
func TestOneReferenceFromManyWorkersWithFaultsChargesOnce(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			_, reopen := b.open(t)
			srv := a55test.New(t)
			addRoughFaults(t, srv.AddFault, a55test.ChargePath)
			const workers = 12
			clients := make([]*a55.Client, workers)
			for i := range clients {
				clients[i] = a55Client(t, srv, reopen(t))
			}
			ids, keys := callTogether(t, workers, func(w int) (string, string, error) {
				ch, err := clients[w].Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("order-1/charge"))
				if err != nil {
					return "", "", err
				}
				return ch.UUID, ch.Meta.Key.String(), nil
			})
			srv.ClearFaults()
			ch, err := clients[0].Charges.Create(t.Context(), chargeRequest("4111111111111111"), payonce.WithReference("order-1/charge"))
			require.NoError(t, err)
			ids[ch.UUID] = true
			assert.Len(t, keys, 1, "one key for the reference")
			assert.Len(t, ids, 1, "every caller got the one charge")
			assert.Equal(t, 1, srv.Ledger().CountKind("charge.create"))
		})
	}
}

// Coinepay: many workers, each with its own client and journal handle and
// no key of their own, open one card for one reference while the fake
// loses answers, answers 503 and resets: the journal gives all of them one
// key and the fake opens one card.
func TestCoinepayOneReferenceFromManyWorkersWithFaultsOpensOneCard(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			_, reopen := b.open(t)
			srv := coinepaytest.New(t)
			addRoughFaults(t, srv.AddFault, coinepay.PathCardApply)
			req := &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"}
			const workers = 10
			clients := make([]*coinepay.Client, workers)
			for i := range clients {
				clients[i] = coinepayClient(t, srv, reopen(t))
			}
			cards, keys := callTogether(t, workers, func(w int) (string, string, error) {
				res, err := clients[w].Cards.Apply(t.Context(), req, payonce.WithReference("job-7"))
				if err != nil {
					return "", "", err
				}
				return res.Card.CardID, res.Meta.Key.String(), nil
			})
			srv.ClearFaults()
			res, err := clients[0].Cards.Apply(t.Context(), req, payonce.WithReference("job-7"))
			require.NoError(t, err)
			cards[res.Card.CardID] = true
			assert.Len(t, keys, 1, "one key for the reference")
			assert.Len(t, cards, 1, "one card")
			assert.Equal(t, 1, srv.Ledger().Len())
		})
	}
}

// callTogether runs call from workers goroutines at once, each until it
// succeeds (at most 5 tries; a failure must be temporary or a conflict of
// a run in flight), and returns the IDs the successes gave and every key
// seen, successes and failures alike.
func callTogether(t *testing.T, workers int, call func(w int) (id, key string, err error)) (ids, keys map[string]bool) {
	t.Helper()
	var mu sync.Mutex
	ids, keys = map[string]bool{}, map[string]bool{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range 5 {
				id, key, err := call(w)
				mu.Lock()
				if err == nil {
					ids[id], keys[key] = true, true
					mu.Unlock()
					return
				}
				keys[payonce.KeyOf(err).String()] = true
				mu.Unlock()
				assert.True(t, payonce.IsTemporary(err) || errors.Is(err, payonce.ErrIdempotencyConflict), "%v", err)
			}
		})
	}
	wg.Wait()
	return ids, keys
}

// Several processes sharing one journal (an SQLite file, a PostgreSQL
// schema) call Do with the same references at once while the fake loses
// answers and answers 503: each reference is charged once, and every
// process that got a result got that charge, under one key.
func TestSeveralProcessesCallOneReferenceOnce(t *testing.T) {
	if os.Getenv("PROCESS_HELPER") != "" {
		t.Skip("helper process")
	}
	journals := map[string]string{"sqlite": "sqlite:" + filepath.Join(t.TempDir(), "procs.db")}
	if url := os.Getenv("PAYONCE_POSTGRES_URL"); url != "" {
		schema := fmt.Sprintf("payonce_procs_%d", time.Now().UnixNano())
		journals["postgres"] = "pg:" + schema
		t.Cleanup(func() {
			p, err := pgxpool.New(context.Background(), url)
			if err == nil {
				_, _ = p.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
				p.Close()
			}
		})
	}
	for name, spec := range journals {
		t.Run(name, func(t *testing.T) {
			srv := a55test.New(t)
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 3}))
			require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultErrorBeforeCommit, Path: a55test.ChargePath, Status: 503, Probability: 0.3}))
			const procs, refs = 4, 3
			var cmds []*exec.Cmd
			var outs []*bytes.Buffer
			for range procs {
				cmd := exec.Command(os.Args[0], "-test.run=^TestProcessHelper$")
				cmd.Env = append(os.Environ(), "PROCESS_HELPER=1", "PROCESS_URL="+srv.URL, "PROCESS_ID="+srv.ClientID(),
					"PROCESS_SECRET="+srv.ClientSecret(), "PROCESS_WALLET="+srv.WalletUUID(), "PROCESS_MERCHANT="+srv.MerchantID(), "PROCESS_JOURNAL="+spec, fmt.Sprintf("PROCESS_REFS=%d", refs))
				out := &bytes.Buffer{}
				cmd.Stdout, cmd.Stderr = out, out
				require.NoError(t, cmd.Start())
				cmds, outs = append(cmds, cmd), append(outs, out)
			}
			got := map[string]map[string]bool{}
			for i, cmd := range cmds {
				require.NoError(t, cmd.Wait(), outs[i].String())
				for line := range strings.SplitSeq(outs[i].String(), "\n") {
					var ref, uuid, key string
					if n, _ := fmt.Sscanf(line, "CHARGED %s %s %s", &ref, &uuid, &key); n == 3 {
						if got[ref] == nil {
							got[ref] = map[string]bool{}
						}
						got[ref][uuid+" "+key] = true
					}
				}
			}
			require.Len(t, got, refs, "every reference settled")
			for ref, ids := range got {
				assert.Len(t, ids, 1, ref)
			}
			assert.Equal(t, refs, srv.Ledger().CountKind("charge.create"), "one charge per reference")
			faults := 0
			for _, r := range srv.Requests() {
				if r.Fault != "" {
					faults++
				}
			}
			assert.GreaterOrEqual(t, faults, 3, "the faults fired")
		})
	}
}

// TestProcessHelper is one process of TestSeveralProcessesCallOneReferenceOnce.
func TestProcessHelper(t *testing.T) {
	spec := os.Getenv("PROCESS_JOURNAL")
	if os.Getenv("PROCESS_HELPER") == "" || spec == "" {
		t.Skip("run by TestSeveralProcessesCallOneReferenceOnce")
	}
	ctx := context.Background()
	var j journal.Store
	if path, ok := strings.CutPrefix(spec, "sqlite:"); ok {
		sj, err := sqlitejournal.Open(ctx, path)
		require.NoError(t, err)
		defer sj.Close()
		j = sj
	} else {
		pj, err := pgjournal.Open(ctx, os.Getenv("PAYONCE_POSTGRES_URL"), pgjournal.WithSchema(strings.TrimPrefix(spec, "pg:")))
		require.NoError(t, err)
		defer pj.Close()
		j = pj
	}
	url := os.Getenv("PROCESS_URL")
	auth := a55.ClientCredentials(os.Getenv("PROCESS_ID"), os.Getenv("PROCESS_SECRET"))
	auth.TokenURL = url + a55test.TokenPath
	c, err := a55.NewClient(auth, payonce.WithBaseURL(url), payonce.WithJournal(j), payonce.WithRetryPolicy(payoncetest.FastRetryPolicy()))
	require.NoError(t, err)
	c = c.WithAccount(a55.Account{MerchantID: os.Getenv("PROCESS_MERCHANT"), WalletUUID: os.Getenv("PROCESS_WALLET")})
	var refs int
	_, _ = fmt.Sscanf(os.Getenv("PROCESS_REFS"), "%d", &refs)
	for r := range refs {
		ref := fmt.Sprintf("proc-ref-%d", r)
		for try := 0; ; try++ {
			ch, err := c.Charges.Create(ctx, chargeRequest("4111111111111111"), payonce.WithReference(ref))
			if err == nil {
				fmt.Printf("CHARGED %s %s %s\n", ref, ch.UUID, ch.Meta.Key)
				break
			}
			if errors.Is(err, payonce.ErrJournalLeased) {
				// Another process's run holds the reference: nothing
				// was sent; its lease ends with its run.
				try--
				time.Sleep(5 * time.Millisecond)
				continue
			}
			require.Less(t, try, 20, "%v", err)
		}
	}
}
