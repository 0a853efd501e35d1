package a55test_test

import (
	"context"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55/a55test"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A webhook_url over plain http:// to a host that is not loopback would
// have the provider POST every signed status change of the charge in
// clear text: Create refuses it before anything is sent, tricky hosts that
// only look like loopback included. https:// and loopback http:// pass.
func TestChargeWebhookURLPlainHTTPToNonLoopbackIsRefused(t *testing.T) {
	for _, url := range []string{
		"http://merchant.example/hooks/a55",
		"HTTP://merchant.example/hooks/a55",
		"http://localhost.evil.com/hook",
		"http://127.0.0.1.nip.io/hook",
		"http://0x7f.1/hook",
		"http://2130706433/hook",
		"//merchant.example/hook",
		"/hooks/a55",
		"ftp://merchant.example/hook",
		"https:///hook",
	} {
		srv, c := fixedServer(t)
		_, err := c.Charges.Create(context.Background(), hookedCharge(t, a55test.CardConfirms, url, true))
		require.ErrorIs(t, err, payonce.ErrInvalidRequest, url)
		assert.Contains(t, err.Error(), "webhook_url", url)
		assert.NotEmpty(t, payonce.KeyOf(err).ID(), "the refusal carries the key: %s", url)
		assert.NotContains(t, err.Error(), "example", "the URL itself is never in the error: "+url)
		assert.Empty(t, srv.Requests(), "nothing sent: %s", url)
	}
	for _, url := range []string{"", "https://merchant.example/hooks/a55?token=x", "http://127.0.0.1:9/hook", "http://localhost:9/hook", "http://[::1]:9/hook"} {
		_, c := fixedServer(t)
		_, err := c.Charges.Create(context.Background(), hookedCharge(t, a55test.CardConfirms, url, true))
		require.NoError(t, err, url)
	}
}
