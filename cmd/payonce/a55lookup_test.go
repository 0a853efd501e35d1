package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/payoncetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An A55 charge whose answer was lost is found by -lookup with the exact
// request given as a file, and the next call answers from the journal.
func TestA55LookupWithRequestFile(t *testing.T) {
	b := backends(t)[0]
	ctx := t.Context()
	srv := a55test.New(t)
	j := b.open(t)
	one := payonce.FastRetryPolicy()
	one.MaxAttempts = 1
	client, err := srv.Client(payonce.WithJournal(j), payonce.WithRetryPolicy(one))
	require.NoError(t, err)
	req := &a55.ChargeCreateRequest{Amount: payonce.MustParseAmount("42.00"), Currency: payonce.BRL, TypeCharge: a55.TypeBoleto, Description: "order-77"}
	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: a55test.ChargePath, Count: 1}))
	_, err = client.Charges.Create(ctx, req, payonce.WithReference("order-77/charge"))
	require.Error(t, err)
	srv.Clock().Advance(25 * time.Hour)

	body, err := json.Marshal(req)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "charge.json")
	require.NoError(t, os.WriteFile(file, body, 0o600))
	env := map[string]string{a55.EnvClientID: srv.ClientID(), a55.EnvClientSecret: srv.ClientSecret(), a55.EnvTokenURL: srv.TokenURL(), EnvA55BaseURL: srv.URL}
	var out, errb bytes.Buffer
	code := runWith(ctx, append([]string{"journal", "settle", "-lookup", "-request", file, "-json", client.Core().Scope(), "order-77/charge"}, b.flags...),
		&out, &errb, func(k string) string { return env[k] }, deps{httpClient: srv.HTTPClient(), now: srv.Clock().Now})
	require.Equal(t, 0, code, errb.String())
	var res settleResult
	require.NoError(t, json.Unmarshal(out.Bytes(), &res))
	assert.Equal(t, "succeeded", res.Outcome)
	ch, err := client.Charges.Create(ctx, req, payonce.WithReference("order-77/charge"))
	require.NoError(t, err)
	assert.True(t, ch.Meta.FromJournal)
	assert.Equal(t, "charge "+ch.UUID, res.Found)
	assert.Equal(t, 1, srv.Ledger().Len())
}
