package payonce_test

import (
	"strings"
	"testing"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A core client with a journal needs a scope: without one, its entries
// would meet those of every other client without one.
func TestJournalWithoutScopeIsRefused(t *testing.T) {
	_, err := payonce.NewClient(payonce.WithBaseURL("https://api.example"), payonce.WithJournal(journal.NewMemory()))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "WithScope")

	_, err = payonce.NewClient(payonce.WithBaseURL("https://api.example"), payonce.WithJournal(journal.NewMemory()), payonce.WithScope(""))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig, "an empty scope is no scope")

	c, err := payonce.NewClient(payonce.WithBaseURL("https://api.example"), payonce.WithJournal(journal.NewMemory()),
		corekit.WithScopeIdentity("shop:1"))
	require.NoError(t, err)
	assert.Equal(t, "shop:1@https://api.example", c.Scope())

	c, err = payonce.NewClient(payonce.WithBaseURL("https://api.example"))
	require.NoError(t, err, "no journal, no scope needed")
	assert.Empty(t, c.Scope())
}

// ScopeOf joins identity and origin; what cannot be a scope is refused.
func TestScopeOf(t *testing.T) {
	s, err := corekit.ScopeOf("p:id", "HTTPS://Host.Example:443/x/y")
	require.NoError(t, err)
	assert.Equal(t, "p:id@https://host.example", s)
	s, err = corekit.ScopeOf("p:id", "http://host.example:8080")
	require.NoError(t, err)
	assert.Equal(t, "p:id@http://host.example:8080", s)

	for name, tc := range map[string][2]string{
		"empty identity": {"", "https://a.example"},
		"too long":       {strings.Repeat("x", corekit.MaxReferenceLen), "https://a.example"},
		"control char":   {"p:\n", "https://a.example"},
		"relative URL":   {"p:id", "/api"},
		"user info":      {"p:id", "https://u:p@a.example"},
		"ftp":            {"p:id", "ftp://a.example"},
	} {
		_, err := corekit.ScopeOf(tc[0], tc[1])
		assert.ErrorIs(t, err, payonce.ErrInvalidConfig, name)
	}
	_, err = payonce.NewClient(payonce.WithBaseURL("https://api.example"), corekit.WithScopeIdentity(strings.Repeat("x", 250)))
	require.ErrorIs(t, err, payonce.ErrInvalidConfig, "identity and origin over 255 bytes")
}
