package journal_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/coinepay/coinepaytest"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/payoncetest"
)

// A rolling deploy across the scope change: workers of the earlier
// version, which record under "coinepay:<SHA-256 prefix of the API key>",
// still run while today's start. Today's client maps the old scope
// (WithLegacyScopes) and moves its entries at its first journal use, and
// asks the journal no more. Then an earlier worker reserves job 9 under
// the old scope and sends, and its answer is lost; the queue redelivers
// job 9 to today's worker, which finds nothing under its own scope and
// applies again under a new key: two cards for one job. The client must
// not send a reference an earlier scope holds (refuse, as it does at its
// first use, or resume it with its key).
func TestRollingDeployAcrossTheScopeChangeIssuesOnce(t *testing.T) {
	ctx := t.Context()
	srv := coinepaytest.New(t)
	j := journal.NewMemory()
	sum := sha256.Sum256([]byte(srv.APIKey()))
	old := coinepay.ProviderName + ":" + hex.EncodeToString(sum[:8])
	req := &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}

	earlier, err := srv.Client(payonce.WithJournal(j), payonce.WithScope(old))
	require.NoError(t, err)
	_, err = earlier.Cards.Apply(ctx, req, payonce.WithReference("job-1/apply"))
	require.NoError(t, err)

	today, err := srv.Client(payonce.WithJournal(j), payonce.WithLegacyScopes(old))
	require.NoError(t, err)
	_, err = today.Cards.Apply(ctx, req, payonce.WithReference("job-1/apply"))
	require.NoError(t, err, "moved at first use, answered from the journal")
	require.Equal(t, 1, srv.Ledger().CountKind("card.apply"))

	require.NoError(t, srv.AddFault(payoncetest.Rule{Fault: payoncetest.FaultDropAfterCommit, Path: coinepay.PathCardApply, Count: 1}))
	_, err = earlier.Cards.Apply(ctx, req, payonce.WithReference("job-9/apply"), payonce.WithCallRetryPolicy(oneTry(1)))
	require.Error(t, err, "the earlier worker's answer is lost")
	require.Equal(t, 2, srv.Ledger().CountKind("card.apply"))

	_, _ = today.Cards.Apply(ctx, req, payonce.WithReference("job-9/apply"))
	assert.Equal(t, 2, srv.Ledger().CountKind("card.apply"), "job 9 issued once")
}
