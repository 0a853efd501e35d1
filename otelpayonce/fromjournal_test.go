package otelpayonce_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/otelpayonce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
)

// A call answered from the journal says so on its span and in the
// operations metric, and both calls name the reference by its template:
// the raw reference reaches no span and no metric.
func TestAnswerFromTheJournalIsMarked(t *testing.T) {
	tm := newTelemetry(t)
	c, err := payonce.NewClient(payonce.WithBaseURL("http://127.0.0.1:1"), payonce.WithObserver(tm.obs),
		payonce.WithHTTPClient(&http.Client{Transport: answerOK{}}), payonce.WithJournal(journal.NewMemory()), payonce.WithScope("test:merchant"))
	require.NoError(t, err)
	req := &payonce.Request{Operation: "charges.create", Method: http.MethodPost, Path: "/v1/charges", Body: map[string]string{"amount": "1.00"}, Keyed: true}
	for range 2 {
		_, err := c.Do(t.Context(), req, nil, payonce.WithReference("order-42/charge"))
		require.NoError(t, err)
	}
	var fromJournal []bool
	for _, s := range tm.spans.Ended() {
		if s.SpanKind() != trace.SpanKindInternal {
			continue
		}
		v, ok := attr(s, otelpayonce.AttrFromJournal)
		require.True(t, ok, "every operation span says where its answer came from")
		fromJournal = append(fromJournal, v.AsBool())
		tmpl, ok := attr(s, otelpayonce.AttrReferenceTemplate)
		require.True(t, ok)
		assert.Equal(t, "order-{id}/charge", tmpl.AsString())
		for _, kv := range s.Attributes() {
			assert.NotContains(t, kv.Value.String(), "order-42", kv.Key)
		}
	}
	assert.Equal(t, []bool{false, true}, fromJournal)

	tmpl := otelpayonce.AttrReferenceTemplate.String("order-{id}/charge")
	assert.EqualValues(t, 1, tm.sum(t, otelpayonce.MetricOperations, otelpayonce.AttrFromJournal.Bool(true), tmpl))
	assert.EqualValues(t, 1, tm.sum(t, otelpayonce.MetricOperations, otelpayonce.AttrFromJournal.Bool(false), tmpl))
	assert.EqualValues(t, 1, tm.sum(t, otelpayonce.MetricAttempts, tmpl), "one attempt, the first call's")
	for k := range tm.attributeKeys(t) {
		assert.False(t, strings.Contains(string(k), "order-42"), k)
	}
	assert.NotContains(t, tm.metricValues(t), "order-42")
}

// A call without a reference carries neither attribute on its metrics.
func TestCallWithoutReferenceHasNoTemplate(t *testing.T) {
	tm := newTelemetry(t)
	c, err := payonce.NewClient(payonce.WithBaseURL("http://127.0.0.1:1"), payonce.WithObserver(tm.obs),
		payonce.WithHTTPClient(&http.Client{Transport: answerOK{}}))
	require.NoError(t, err)
	_, err = c.Do(t.Context(), &payonce.Request{Operation: "customers.get", Method: http.MethodGet, Path: "/v1/customers"}, nil)
	require.NoError(t, err)
	keys := tm.attributeKeys(t)
	assert.False(t, keys[otelpayonce.AttrReferenceTemplate])
	assert.False(t, keys[otelpayonce.AttrFromJournal])
}
