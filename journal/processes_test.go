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
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/pgjournal"
	"github.com/payonce/payonce/journal/sqlitejournal"
	"github.com/payonce/payonce/payoncetest"
)

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
					"PROCESS_SECRET="+srv.ClientSecret(), "PROCESS_JOURNAL="+spec, fmt.Sprintf("PROCESS_REFS=%d", refs))
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
	c, err := a55.NewClient(auth, payonce.WithBaseURL(url), payonce.WithJournal(j), payonce.WithRetryPolicy(payonce.FastRetryPolicy()))
	require.NoError(t, err)
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
