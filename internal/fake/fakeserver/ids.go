package fakeserver

import (
	"encoding/hex"
	"math/rand/v2"
	"sync"
)

// idGen makes resource IDs from a seeded source, so a run is reproducible.
type idGen struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func newIDGen(seed uint64) *idGen {
	return &idGen{rng: rand.New(rand.NewPCG(seed^0x5851f42d4c957f2d, seed+1))}
}

func (g *idGen) read(b []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := 0; i < len(b); i += 8 {
		v := g.rng.Uint64()
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
}

func (g *idGen) uuid() string {
	var b [16]byte
	g.read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	hex.Encode(s[9:13], b[4:6])
	hex.Encode(s[14:18], b[6:8])
	hex.Encode(s[19:23], b[8:10])
	hex.Encode(s[24:36], b[10:16])
	s[8], s[13], s[18], s[23] = '-', '-', '-', '-'
	return string(s[:])
}

func (g *idGen) id(prefix string) string {
	var b [12]byte
	g.read(b[:])
	var s [64]byte
	out := append(s[:0], prefix...)
	out = hex.AppendEncode(out, b[:])
	return string(out)
}
