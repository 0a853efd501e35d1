package payonce_test

import (
	"context"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
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

// observer is the Observer of o's four hooks.
func (o *routeObserver) observer() payonce.Observer {
	return payonce.Observer{StartOperation: o.StartOperation, StartAttempt: o.StartAttempt, EndAttempt: o.EndAttempt, EndOperation: o.EndOperation}
}

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
		"/v1/paymentMethods/{pmID}":              "/v1/paymentMethods/{pmID}",
		"/v1/cards/{4111111111111111}":           "/v1/cards/{id}",
		"/v1/cards/card_4111":                    "/v1/cards/{id}",
	} {
		o := &routeObserver{}
		c, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithObserver(o.observer()))
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

// roundTripFunc answers in process: thousands of operations without a
// socket.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// routeClient returns a client whose every call answers 200 {} in
// process, and the set of routes its observer saw, by operation start.
func routeClient(t *testing.T) (*payonce.Client, func() map[string]int) {
	t.Helper()
	var mu sync.Mutex
	seen := map[string]int{}
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(`{}`)), Request: r}, nil
	})}
	obs := payonce.Observer{StartOperation: func(ctx context.Context, i payonce.OperationInfo) context.Context {
		mu.Lock()
		defer mu.Unlock()
		seen[i.Route]++
		return ctx
	}}
	c, err := payonce.NewClient(payonce.WithBaseURL("http://127.0.0.1:1"), payonce.WithHTTPClient(hc), payonce.WithObserver(obs))
	require.NoError(t, err)
	return c, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func randomString(rng *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// 300 GETs of one resource by 300 base62 IDs (letters only for some of
// them) are one route: no raw ID reaches an observer.
func TestRouteOfBase62IDsIsOneTemplate(t *testing.T) {
	c, seen := routeClient(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		path := "/v1/customers/" + randomString(rng, base62, 10)
		_, err := c.Do(t.Context(), &payonce.Request{Operation: "customers.get", Method: http.MethodGet, Path: path}, nil)
		require.NoError(t, err)
	}
	assert.Equal(t, map[string]int{"/v1/customers/{id}": 300}, seen())
}

// Route keeps the words of an API and turns every other segment into
// "{id}".
func TestRouteRule(t *testing.T) {
	for path, want := range map[string]string{
		"/v1/customers/cusKxQzAbC":                         "/v1/customers/{id}",
		"/v1/customers/KXQZABCDEF/cards":                   "/v1/customers/{id}/cards",
		"/v1/customers/abcDEF":                             "/v1/customers/{id}",
		"/v1/charges/ch_3N4x8":                             "/v1/charges/{id}",
		"/v1/charges/5f0c6f5e-7d4f-4c9b-9d7e-2f1a3b4c5d6e": "/v1/charges/{id}",
		"/v1/orders/42/refund":                             "/v1/orders/{id}/refund",
		"/v2/payment-methods/pm.x":                         "/v2/payment-methods/pm.x",
		"/v2/payment_methods/{pm_id}":                      "/v2/payment_methods/{pm_id}",
		"/api/v1/bank/wallet/charge/":                      "/api/v1/bank/wallet/charge/",
		"/api/v1/openapi/card/apply":                       "/api/v1/openapi/card/apply",
		"/v1/users/j%C3%BCrgen":                            "/v1/users/{id}",
		"/v1/users/jürgen":                                 "/v1/users/{id}",
		"/v1/users/a@b.c":                                  "/v1/users/{id}",
		"/v1/x/{not a placeholder}":                        "/v1/x/{id}",
		"/v1/charges?customer=cus_1":                       "/v1/charges",
		"/v1/charges/qwertyuiopasdfghjklzxcvbnmqwertyu/x":  "/v1/charges/{id}/x",
		"/v1/charges/--":                                   "/v1/charges/{id}",
	} {
		assert.Equal(t, want, payonce.Route(path), path)
	}
}

// Paths no rule recognises as IDs (a caller forwarding arbitrary words)
// fill a bounded table: past its cap every new route is one overflow
// route, so 10,000 hostile paths cannot grow memory or cardinality.
func TestRouteTableStaysBounded(t *testing.T) {
	c, seen := routeClient(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		path := "/v1/" + randomString(rng, "abcdefghijklmnopqrstuvwxyz", 8) + "/" + randomString(rng, "abcdefghijklmnopqrstuvwxyz", 6)
		_, err := c.Do(t.Context(), &payonce.Request{Operation: "hostile.get", Method: http.MethodGet, Path: path}, nil)
		require.NoError(t, err)
	}
	got := seen()
	assert.LessOrEqual(t, len(got), 257)
	assert.Greater(t, got["other"], 9000, "past the cap, routes are the overflow route")
	// A route already in the table keeps its name once the table is full.
	for r := range got {
		if r == "other" {
			continue
		}
		_, err := c.Do(t.Context(), &payonce.Request{Operation: "hostile.get", Method: http.MethodGet, Path: r}, nil)
		require.NoError(t, err)
		assert.Equal(t, got[r]+1, seen()[r], r)
		break
	}
	// A template the caller gives keeps its name: derived routes never
	// push given ones out of the table.
	_, err := c.Do(t.Context(), &payonce.Request{Operation: "orders.get", Method: http.MethodGet, Path: "/v1/orders/abc",
		Route: "/v1/orders/{order}"}, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, seen()["/v1/orders/{order}"])
	// A very long path of words is the overflow route too: no route holds
	// more than a bounded number of bytes.
	c2, seen2 := routeClient(t)
	_, err = c2.Do(t.Context(), &payonce.Request{Operation: "long.get", Method: http.MethodGet, Path: strings.Repeat("/abc", 1000)}, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"other": 1}, seen2())
}
