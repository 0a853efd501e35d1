package fakeserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two engines built with default options draw different IDs: a
// merchant's test database kept between runs never sees the same charge
// UUID twice.
func TestEnginesWithoutSeedDrawDistinctIDs(t *testing.T) {
	a, b := New(Options{}), New(Options{})
	defer a.Close()
	defer b.Close()
	assert.NotEqual(t, a.NewUUID(), b.NewUUID())
	assert.NotEqual(t, a.NewID("ch_"), b.NewID("ch_"))
}

// A seed given makes the run reproducible: the same IDs in the same
// order, whatever the instance; the seed drawn for an unseeded engine is
// reported so that its run can be replayed.
func TestSeededEnginesRepeatTheirIDs(t *testing.T) {
	a, b := New(Options{Seed: 7, Seeded: true}), New(Options{Seed: 7, Seeded: true})
	defer a.Close()
	defer b.Close()
	for range 3 {
		require.Equal(t, a.NewUUID(), b.NewUUID())
		require.Equal(t, a.NewID("whd_"), b.NewID("whd_"))
	}
	assert.Equal(t, uint64(7), a.Seed())

	zero := New(Options{Seeded: true})
	defer zero.Close()
	assert.Equal(t, uint64(0), zero.Seed(), "0 is a seed like any other once given")

	drawn := New(Options{})
	defer drawn.Close()
	replay := New(Options{Seed: drawn.Seed(), Seeded: true})
	defer replay.Close()
	assert.Equal(t, drawn.NewUUID(), replay.NewUUID())
}

// A seed replays the same IDs from build to build, not only within one:
// the IDs of seed 1 are written down.
func TestSeedOneIDs(t *testing.T) {
	e := New(Options{Seed: 1, Seeded: true})
	defer e.Close()
	assert.Equal(t, "b87dd371-2b87-4c37-8b84-f0aff42209b5", e.NewUUID())
	assert.Equal(t, "req_923314316df51632e7335233", e.NewID("req_"))
	assert.Equal(t, "d15d5e1f-1869-4bed-b31f-ed6b6e473837", e.NewUUID())
	assert.Equal(t, "d48dce2aff46600774bb16dc", e.NewID(""))
}
