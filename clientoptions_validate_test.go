package payonce

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// A user agent or provider name that would forge a header or a log line,
// or has no bound, is refused by NewClient.
func TestUserAgentAndProviderValidate(t *testing.T) {
	for _, opt := range []Option{
		WithUserAgent("shop/1.0\r\nX-Evil: 1"),
		WithUserAgent(strings.Repeat("u", 1025)),
		WithProvider("a55\nfake"),
		WithProvider(strings.Repeat("p", 65)),
	} {
		_, err := NewClient(WithBaseURL("http://127.0.0.1:1"), opt)
		require.ErrorIs(t, err, ErrInvalidConfig)
		assert.NotContains(t, err.Error(), "\n")
	}
	_, err := NewClient(WithBaseURL("http://127.0.0.1:1"), WithUserAgent("shop/1.0 (+https://shop.example)"), WithProvider("a55"))
	require.NoError(t, err)
}

// A nil pointer in an interface is not a nil interface: a client given
// one passed NewClient and panicked on its first call (the limiter's
// Wait, the signer's Sign, the journal's Reserve on a nil receiver). It
// is refused by NewClient, like a nil interface.
func TestTypedNilDependenciesAreRefused(t *testing.T) {
	for name, opt := range map[string]Option{
		"limiter":     WithLimiter((*rate.Limiter)(nil)),
		"signer":      WithSigner((*hmacSigner)(nil)),
		"signer func": WithSigner(SignerFunc(nil)),
		"journal":     WithJournal((*nilJournal)(nil)),
		"codec":       WithCodec((*JSONCodec)(nil)),
		"observer":    WithObserver((*nilObserver)(nil)),
	} {
		_, err := NewClient(WithBaseURL("http://127.0.0.1:1"), opt)
		require.ErrorIs(t, err, ErrInvalidConfig, name)
	}
}

type nilJournal struct{ Journal }

type nilObserver struct{ Observer }
