package a55fake

import (
	"fmt"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The queue is bounded: past WebhookQueue waiting deliveries, new events
// are recorded as dropped, never queued; the record list is bounded too.
func TestWebhookQueueIsBounded(t *testing.T) {
	e := fakeserver.New(fakeserver.Options{Clock: fakeserver.NewFixedClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))})
	defer e.Close()
	f := New(e, Config{WebhookQueue: 2})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := "http://" + ln.Addr().String() + "/hook"
	require.NoError(t, ln.Close())

	f.mu.Lock()
	for i := range 3 {
		f.hooks.enqueue(&charge{UUID: fmt.Sprint("c", i), Status: StatusConfirmed, WebhookURL: refused}, event{})
	}
	f.mu.Unlock()
	f.DeliverDueWebhooks()
	var states []string
	for _, d := range f.WebhookDeliveries("") {
		states = append(states, d.State)
	}
	assert.Equal(t, []string{WebhookPending, WebhookPending, WebhookDropped}, states)

	// Records: the oldest finished ones go first, waiting ones stay.
	for i := range maxWebhookRecords + 5 {
		f.hooks.enqueue(&charge{UUID: fmt.Sprint("x", i), Status: StatusConfirmed, WebhookURL: "http://192.0.2.1/"}, event{})
	}
	all := f.WebhookDeliveries("")
	assert.Len(t, all, maxWebhookRecords)
	assert.Equal(t, "c0", all[0].ChargeUUID)
	assert.Equal(t, "c1", all[1].ChargeUUID)

	e.Reset()
	assert.Empty(t, f.WebhookDeliveries(""))
}

func TestWebhookSecretNeverPrinted(t *testing.T) {
	e := fakeserver.New(fakeserver.Options{})
	defer e.Close()
	f := New(e, Config{WebhookSecret: "very-secret-value"})
	assert.NotContains(t, fmt.Sprintf("%v %+v %#v", f.hooks, f.hooks, f.hooks), "very-secret-value")
	assert.Equal(t, "very-secret-value", f.WebhookSecret())
}

// The address actually dialed is checked: a URL that got past the host
// check but leads elsewhere is refused before any packet is sent.
func TestWebhookDialRefusesNonLoopback(t *testing.T) {
	clk := fakeserver.NewFixedClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	w := newWebhooks(Config{}, clk, func() string { return "whd_1" }, nil)
	defer w.close()
	u, err := url.Parse("http://192.0.2.1:9/hook")
	require.NoError(t, err)
	assert.False(t, w.allowed(u))
	d := &WebhookDelivery{target: u, Body: []byte(`{}`), State: WebhookPending}
	w.pending = append(w.pending, d)
	w.attempt(d)
	assert.Equal(t, WebhookBlocked, d.State)
	require.Len(t, d.Attempts, 1)
	assert.Equal(t, "blocked", d.Attempts[0].Error)
	assert.Empty(t, w.pending)

	open := newWebhooks(Config{WebhookAllowAnyHost: true}, clk, func() string { return "whd_2" }, nil)
	defer open.close()
	assert.True(t, open.allowed(u))
	for _, bad := range []string{"ftp://127.0.0.1/", "http:///path", "mailto:a@b"} {
		v, _ := url.Parse(bad)
		assert.False(t, open.allowed(v), bad)
	}
}

// A wildcard listener is reached on any loopback address and any address
// of the host: all of them are the fake itself. Another port is not.
func TestWebhookSelfTargets(t *testing.T) {
	clk := fakeserver.NewFixedClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	self := func() []net.Addr { return []net.Addr{&net.TCPAddr{IP: net.IPv6unspecified, Port: 4455}} }
	w := newWebhooks(Config{WebhookAllowAnyHost: true}, clk, func() string { return "whd_1" }, self)
	defer w.close()
	for raw, want := range map[string]bool{
		"http://127.0.0.1:4455/hook":           true,
		"http://127.0.0.9:4455/hook":           true,
		"http://[::1]:4455/hook":               true,
		"http://[::ffff:127.0.0.1]:4455/x":     true,
		"http://localhost:4455/hook":           true,
		"http://127.0.0.1:4456/hook":           false,
		"http://192.0.2.1:4455/hook":           false,
		"http://192.0.2.1:4456/_fakepay/x":     true,
		"http://192.0.2.1/_FakePay":            true,
		"http://192.0.2.1/a/../_fakepay/reset": true,
		"http://192.0.2.1/_fakepayx":           false,
	} {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		assert.Equal(t, want, w.selfTarget(u), raw)
	}
	assert.False(t, w.isSelf(net.ParseIP("192.0.2.1"), 4455))
	assert.True(t, w.isSelf(net.ParseIP("127.0.0.1"), 4455))

	allowed := newWebhooks(Config{WebhookAllowSelf: true}, clk, func() string { return "whd_2" }, self)
	defer allowed.close()
	u, _ := url.Parse("http://127.0.0.1:4455/hook")
	assert.False(t, allowed.selfTarget(u))
	u, _ = url.Parse("http://127.0.0.1:4455/_fakepay/reset")
	assert.True(t, allowed.selfTarget(u), "the admin API is never a target")
}
