package otelpayonce

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/payonce/payonce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

type answerOK struct{}

func (answerOK) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{}`)), Request: r}, nil
}

// budgetEntries counts the retry budgets the observer holds an entry for.
func (o *Observer) budgetEntries() int {
	n := 0
	o.budgets.Range(func(any, any) bool { n++; return true })
	return n
}

// runOnce makes a client of its own (with its own retry budget), runs one
// operation through obs and drops the client.
func runOnce(t *testing.T, obs *Observer) {
	t.Helper()
	c, err := payonce.NewClient(payonce.WithBaseURL("http://127.0.0.1:1"), payonce.WithObserver(obs.Hooks()),
		payonce.WithHTTPClient(&http.Client{Transport: answerOK{}}))
	require.NoError(t, err)
	_, err = c.Do(context.Background(), &payonce.Request{Operation: "customers.list", Method: http.MethodGet, Path: "/v1/customers"}, nil)
	require.NoError(t, err)
}

// A client made per request, with an observer shared by all of them and a
// meter provider that never collects (the global no-op one, when only
// tracing is set up): the budgets of clients gone are not kept, so the
// observer's memory follows the clients alive (between two collections
// of the garbage, here every 100 clients), not the clients ever made.
func TestBudgetsOfClientsGoneAreNotKept(t *testing.T) {
	obs, err := New(WithTracerProvider(tracenoop.NewTracerProvider()), WithMeterProvider(noop.NewMeterProvider()))
	require.NoError(t, err)
	defer obs.Close()
	const clients = 3000
	for i := range clients {
		runOnce(t, obs)
		if i%100 == 99 {
			runtime.GC()
		}
	}
	runtime.GC()
	assert.LessOrEqual(t, obs.budgetEntries(), 256, "budgets of %d clients gone", clients)
}
