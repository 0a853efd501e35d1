package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/payonce/payonce/coinepay/coinepaytest"
)

// A second run against external servers that served an earlier run
// reconciles only its own operations: none of the first run's ledger
// entries count as lost, and the server figures are this run's.
func TestChaosExternalServersServedEarlierRuns(t *testing.T) {
	big, err := payonce.ParseAmount("100000000.00")
	require.NoError(t, err)
	a55Srv := a55test.NewServer(a55test.WithRateLimit(-1, time.Minute))
	defer a55Srv.Close()
	cpSrv := coinepaytest.NewServer(coinepaytest.WithBalance(big))
	defer cpSrv.Close()

	cfg := testConfig(60)
	cfg.A55URL, cfg.CoinepayURL = a55Srv.URL, cpSrv.URL
	cfg.A55ClientID, cfg.A55ClientSecret = a55Srv.ClientID(), a55Srv.ClientSecret()
	cfg.CoinepayKey, cfg.CoinepaySecret = coinepaytest.DefaultAPIKey, coinepaytest.DefaultSecret
	cfg.FaultRate = 0

	first, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	require.True(t, first.Passed(), first.ResultLine())
	before := a55Srv.Stats().Requests + cpSrv.Stats().Requests

	cfg.Seed++
	second, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	assert.Zero(t, second.Lost, second.ResultLine())
	assert.True(t, second.Passed())
	assert.Equal(t, a55Srv.Ledger().Len()+cpSrv.Ledger().Len()-first.Operations, second.Operations)
	assert.Equal(t, a55Srv.Stats().Requests+cpSrv.Stats().Requests-before, second.Server.Requests)
}
