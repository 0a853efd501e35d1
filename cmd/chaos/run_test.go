package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay/coinepaytest"
)

// The tests' runs are small: a few dozen operations, and a crash phase
// of a few references (-crash-n sizes it), which costs worker processes.

func TestRunPrintsTableAndResultLine(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-n", "60", "-concurrency", "8", "-seed", "3", "-crash-n", "10"}, &out, &errOut, false)
	require.Equal(t, 0, code, errOut.String()+"\n"+out.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// The default run ends with its crash phase: worker processes killed.
	assert.Regexp(t, `^RESULT operations=\d+ attempts=\d+ replays=\d+ resumed=\d+ crashes=[1-9]\d* duplicates=0 lost=0 misrecorded=0$`, lines[len(lines)-1])
	assert.Contains(t, out.String(), "charge.create")
	assert.Contains(t, out.String(), "payonce crash run (worker processes SIGKILLed, journal: sqlite)")
	assert.Regexp(t, `in_doubt \(pending after the run\)\s+\d+`, out.String())
	assert.Contains(t, errOut.String(), "progress:", "plain progress lines when not a terminal")
	assert.Contains(t, errOut.String(), "crash: phase 2, fakes' clock +25h")
	assert.Regexp(t, `crash: phase 1, 1\d references .* to 3 workers`, errOut.String(), "-crash-n sizes the crash phase")
}

func TestRunOtelPrintsTelemetry(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-n", "60", "-concurrency", "8", "-seed", "3", "-otel", "-quiet", "-crash-n", "5"}, &out, &errOut, false)
	require.Equal(t, 0, code, errOut.String())
	s := out.String()
	require.Contains(t, s, "telemetry (OpenTelemetry spans and metrics, otelpayonce)")
	tel := s[strings.Index(s, "telemetry ("):]
	assert.Regexp(t, `spans: operations +\d+`, tel)
	assert.Regexp(t, `spans: attempts +\d+`, tel)
	assert.Regexp(t, `operations: success +\d+`, tel)
	assert.Regexp(t, `attempts +\d+`, tel)
	assert.Regexp(t, `retries: transport +\d+`, tel)
	assert.Regexp(t, `replayed answers +\d+`, tel)
}

func TestRunJSON(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-n", "50", "-json", "-quiet", "-crash-n", "5"}, &out, &errOut, false)
	require.Equal(t, 0, code, errOut.String())
	s := strings.TrimSpace(out.String())
	i := strings.LastIndex(s, "\n")
	require.Positive(t, i)
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(s[:i]), &rep))
	assert.EqualValues(t, 0, rep["duplicates"])
	assert.EqualValues(t, 0, rep["lost"])
	crash, ok := rep["crash"].(map[string]any)
	require.True(t, ok, "the JSON report holds the crash phase")
	for _, k := range []string{"crashes", "redelivered", "in_doubt", "duplicates", "lost"} {
		assert.Contains(t, crash, k)
	}
	assert.True(t, strings.HasPrefix(s[i+1:], "RESULT "))
	assert.Empty(t, errOut.String(), "-quiet prints no progress")
}

func TestRunTerminalProgressBar(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"-n", "50", "-crash-phase=false"}, &out, &errOut, true))
	assert.Contains(t, errOut.String(), "\r[")
	assert.Contains(t, errOut.String(), "100.0%")
}

func TestRunBadFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.Equal(t, 2, run(context.Background(), []string{"-n", "0"}, &out, &errOut, false))
	assert.Contains(t, errOut.String(), "-n must be at least 1")
	assert.Equal(t, 2, run(context.Background(), []string{"-nope"}, &out, &errOut, false))
	assert.Equal(t, 0, run(context.Background(), []string{"-h"}, &out, &errOut, false))
	assert.Equal(t, 2, run(context.Background(), []string{"-crash", "-a55-url", "http://127.0.0.1:1"}, &out, &errOut, false))
	assert.Contains(t, errOut.String(), "-crash runs its own fakes")
	assert.Equal(t, 2, run(context.Background(), []string{"-crash", "-workers", "0"}, &out, &errOut, false))
}

// go run ./cmd/chaos -crash: the crash run alone, as JSON here.
func TestRunCrashJSON(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-crash", "-crash-n", "12", "-workers", "2", "-kill-rate", "0.15", "-json", "-quiet"}, &out, &errOut, false)
	require.Equal(t, 0, code, out.String()+errOut.String())
	s := strings.TrimSpace(out.String())
	i := strings.LastIndex(s, "\n")
	require.Positive(t, i)
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(s[:i]), &rep))
	for _, k := range []string{"crashes", "redelivered", "in_doubt", "duplicates", "lost", "crashes_at", "journal"} {
		assert.Contains(t, rep, k)
	}
	assert.GreaterOrEqual(t, rep["operations"], 12.0, "12 references, and the second merchant's")
	assert.Positive(t, rep["crashes"])
	assert.Regexp(t, `^RESULT operations=1\d attempts=\d+ crashes=[1-9]\d* redelivered=\d+ in_doubt=\d+ duplicates=0 lost=0 misrecorded=0$`, s[i+1:])
}

// tamperLedger serves srv's handler, but answers GET /_fakepay/ledger with
// the real ledger after tamper: a broken server, or a broken client, as
// the reconciliation would see it.
func tamperLedger(t *testing.T, h http.Handler, tamper func([]map[string]any) []map[string]any) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/_fakepay/ledger" {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var v struct {
			Operations []map[string]any `json:"operations"`
		}
		if !assert.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v)) {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		if len(v.Operations) > 0 { // the run first reads where the empty ledger stands
			v.Operations = tamper(v.Operations)
		}
		w.Header().Set("Content-Type", "application/json")
		assert.NoError(t, json.NewEncoder(w).Encode(v))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRunExitsOneWhenTheProofFails(t *testing.T) {
	big, err := payonce.ParseAmount("100000000.00")
	require.NoError(t, err)
	for _, tt := range []struct {
		name   string
		tamper func([]map[string]any) []map[string]any
		result string
		reason string
		code   int
	}{
		{
			name:   "untouched ledger passes",
			tamper: func(ops []map[string]any) []map[string]any { return ops },
			result: "duplicates=0 lost=0 misrecorded=0",
			reason: "RESULT operations=",
			code:   0,
		},
		{
			name: "duplicate",
			tamper: func(ops []map[string]any) []map[string]any {
				for _, op := range ops {
					if op["kind"] == "charge.create" {
						twin := maps.Clone(op)
						twin["id"] = "charge-twin"
						return append(ops, twin) // one key executed twice
					}
				}
				t.Error("no charge in the ledger")
				return ops
			},
			result: "duplicates=1 lost=0 misrecorded=0",
			reason: "problem: duplicate: a55 charge.create key ",
			code:   1,
		},
		{
			name: "lost",
			tamper: func(ops []map[string]any) []map[string]any {
				for i, op := range ops {
					if op["kind"] == "charge.refund" {
						return append(ops[:i:i], ops[i+1:]...) // a refund the server forgot
					}
				}
				t.Error("no refund in the ledger")
				return ops
			},
			result: "duplicates=0 lost=1 misrecorded=0",
			reason: "done for the client, missing from the ledger",
			code:   1,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a55Srv := a55test.New(t, a55test.WithRateLimit(-1, time.Minute))
			cpSrv := coinepaytest.New(t, coinepaytest.WithBalance(big))
			a55URL := tamperLedger(t, a55Srv.Handler(), tt.tamper).URL
			var out, errOut bytes.Buffer
			code := run(context.Background(), []string{"-n", "60", "-quiet", "-seed", "5",
				"-a55-url", a55URL, "-coinepay-url", cpSrv.URL}, &out, &errOut, false)
			assert.Equal(t, tt.code, code, "a report that does not pass exits 1\n%s%s", out.String(), errOut.String())
			assert.Contains(t, out.String(), tt.reason)
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			assert.True(t, strings.HasSuffix(lines[len(lines)-1], tt.result), lines[len(lines)-1])
		})
	}
}
