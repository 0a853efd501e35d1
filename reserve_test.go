package payonce_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/journal"
)

// The key-age guard of a pending entry, at its edge: window 24 h, margin
// 1 h. A key 23 h minus a microsecond old is resumed with the stored key;
// at 23 h it is ErrOutcomeUnknown and nothing is sent, however often the
// reference is called again.
func TestJournalGuardEdgeIsExact(t *testing.T) {
	for _, tc := range []struct {
		age    time.Duration
		resume bool
	}{{23*time.Hour - time.Microsecond, true}, {23 * time.Hour, false}, {48 * time.Hour, false}} {
		t.Run(tc.age.String(), func(t *testing.T) {
			j := journal.NewMemory()
			clk := newClock()
			fail := true
			s := newStub(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if fail {
					w.WriteHeader(http.StatusBadGateway)
					return
				}
				okCharge(n, w, r)
			})
			c := journalClient(t, s, j, clk)
			_, err := c.Do(t.Context(), chargeReq("10.00"), nil, payonce.WithReference("edge"))
			require.ErrorIs(t, err, payonce.ErrRetriesExhausted)
			key, sent := payonce.KeyOf(err).String(), s.calls.Load()
			fail = false
			clk.Advance(tc.age)
			for range 3 {
				var out chargeOut
				meta, err := c.Do(t.Context(), chargeReq("10.00"), &out, payonce.WithReference("edge"))
				if tc.resume {
					require.NoError(t, err)
					assert.Equal(t, key, meta.Key.String())
					assert.Equal(t, key, s.sentKeys()[len(s.sentKeys())-1])
					continue
				}
				require.ErrorIs(t, err, payonce.ErrOutcomeUnknown)
				assert.Equal(t, key, payonce.KeyOf(err).String())
				assert.Equal(t, sent, s.calls.Load(), "nothing sent")
			}
		})
	}
}
