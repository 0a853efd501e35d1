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
