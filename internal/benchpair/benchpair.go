// Package benchpair times two operations side by side in one benchmark:
// each iteration runs one of each, alternating which goes first, so a
// drift of the machine's speed touches both alike.
package benchpair

import (
	"testing"
	"time"
)

// Run runs base and row once each per iteration of b, alternating their
// order, and reports ratio (row's time over base's), base-ns/op and
// row-ns/op. The operations report their own failures through b.
func Run(b *testing.B, base, row func(*testing.B)) {
	var baseTime, rowTime time.Duration
	i := 0
	for b.Loop() {
		first, second := base, row
		if i%2 == 1 {
			first, second = row, base
		}
		t0 := time.Now()
		first(b)
		t1 := time.Now()
		second(b)
		d0, d1 := t1.Sub(t0), time.Since(t1)
		if i%2 == 1 {
			d0, d1 = d1, d0
		}
		baseTime, rowTime = baseTime+d0, rowTime+d1
		i++
	}
	if i > 0 && baseTime > 0 {
		b.ReportMetric(float64(rowTime)/float64(baseTime), "ratio")
		b.ReportMetric(float64(baseTime.Nanoseconds())/float64(i), "base-ns/op")
		b.ReportMetric(float64(rowTime.Nanoseconds())/float64(i), "row-ns/op")
	}
}
