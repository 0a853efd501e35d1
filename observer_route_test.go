package payonce_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/payonce/payonce"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// routeObserver records the Route every hook sees.
type routeObserver struct {
	mu     sync.Mutex
	routes []string
}

func (o *routeObserver) add(r string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.routes = append(o.routes, r)
}

func (o *routeObserver) StartOperation(ctx context.Context, i payonce.OperationInfo) context.Context {
	o.add(i.Route)
	return ctx
}

func (o *routeObserver) StartAttempt(ctx context.Context, i payonce.AttemptInfo) context.Context {
	o.add(i.Route)
	return ctx
}

func (o *routeObserver) EndAttempt(_ context.Context, r payonce.AttemptResult) { o.add(r.Route) }

func (o *routeObserver) EndOperation(_ context.Context, r payonce.OperationResult) { o.add(r.Route) }

// A Request.Route given by the caller (built from a path by mistake) never
// carries its query string or a raw ID to an observer: it is a template
// like one Route(Path) derives; "{id}" placeholders are kept.
func TestObserverRouteGivenHoldsNoQueryOrRawID(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{}`) }))
	defer srv.Close()
	for route, want := range map[string]string{
		"/v1/charges?access_token=tok_route_1":   "/v1/charges",
		"/v1/cards/4111111111111111/charge#frag": "/v1/cards/{id}/charge",
		"/v1/charges/{id}/refund":                "/v1/charges/{id}/refund",
	} {
		o := &routeObserver{}
		c, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithObserver(o))
		require.NoError(t, err)
		req := &payonce.Request{Operation: "charges.create", Method: http.MethodPost, Path: "/v1/charges", Route: route,
			Body: map[string]string{"amount": "1.00"}, Keyed: true}
		_, err = c.Do(t.Context(), req, nil)
		require.NoError(t, err)
		require.Len(t, o.routes, 4)
		for _, got := range o.routes {
			assert.Equal(t, want, got, route)
		}
	}
}
