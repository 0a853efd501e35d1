package chaos

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The OpenTelemetry instruments and the run's own tallies count the same
// run from two sources (the observer hooks; the results' Meta and the
// SDK's debug log) and agree: attempts, retries by cause, signer
// recoveries, replayed answers, and one operation per SDK call.
func TestTelemetryAgreesWithTheReport(t *testing.T) {
	t.Parallel()
	cfg := testConfig(300)
	cfg.Telemetry = true
	// A TIMEOUT naming its charge is settled by a read inside the SDK's
	// create, an operation of its own the run's results cannot see.
	cfg.A55Codes = false
	rep, err := Run(context.Background(), cfg)
	require.NoError(t, err)
	require.True(t, rep.Passed(), rep.Problems)
	tel := rep.Telemetry
	require.NotNil(t, tel)

	// A55 creates whose answer was lost are looked up inside the SDK
	// before a resend (a list, then a read of the charge found):
	// operations of their own the run's results cannot see either, so
	// the instruments count at least what the run does.
	assert.LessOrEqual(t, rep.Attempts, tel.Attempts)
	assert.Equal(t, rep.Retries, tel.Retries)
	assert.NotEmpty(t, tel.Retries, "the fault mix makes the clients retry")
	assert.Equal(t, rep.Recoveries, tel.Recoveries)
	assert.Equal(t, rep.ReplayedAnswers, tel.Replays)
	assert.Positive(t, tel.Replays, "lost Coinepay answers come back as replays")
	ops := 0
	for _, o := range tel.Operations {
		ops += o.Count
	}
	assert.LessOrEqual(t, rep.Submissions, ops)

	// The spans agree with the metrics: one operation span per operation,
	// one attempt span per attempt (signer failures included, which the
	// attempts counter leaves out), errors marked as the outcomes say.
	assert.Equal(t, ops, tel.Spans.Operations)
	assert.GreaterOrEqual(t, tel.Spans.Attempts, tel.Attempts)
	failed := 0
	for _, o := range tel.Operations {
		if o.Outcome != "success" {
			failed += o.Count
		}
	}
	assert.Equal(t, failed, tel.Spans.OperationErrors)
}
