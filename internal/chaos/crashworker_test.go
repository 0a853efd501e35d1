package chaos

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// A worker's clients leave no connection open once it is done: a worker
// process then ends with no goroutine of theirs left to wait for.
func TestCrashClientsCloseTheirIdleConnections(t *testing.T) {
	closed := make(chan struct{}, 8)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)

	cc, err := newCrashClients(workerConfig{A55URL: srv.URL, A55OtherURL: srv.URL, CoinepayURL: srv.URL,
		A55ClientID: "id", A55ClientSecret: "secret", CoinepayKey: "key", CoinepaySecret: "secret"}, nil, nil)
	require.NoError(t, err)
	require.Len(t, cc.http, 3, "one per client: A55, Coinepay, the second merchant")
	for _, hc := range cc.http {
		resp, err := hc.Get(srv.URL)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
	}
	cc.closeIdle()
	for range cc.http {
		select {
		case <-closed:
		case <-t.Context().Done(): // never before the test's timeout: a connection stayed open
			t.Fatal("a connection stayed open")
		}
	}
}
