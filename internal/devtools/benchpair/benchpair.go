package benchpair

import (
	"testing"
	"time"
)

// Run runs base and row once each per iteration of b, alternating their
// order, and reports ratio (row's wall time over base's), cpu-ratio (the
// same with the process's CPU time, CPUTime: on a machine other
// processes load, wall time also measures their share of the cores, CPU
// time only this process's work), base-ns/op and row-ns/op. The
// operations report their own failures through b.
func Run(b *testing.B, base, row func(*testing.B)) {
	var baseTime, rowTime, baseCPU, rowCPU time.Duration
	i := 0
	for b.Loop() {
		first, second := base, row
		if i%2 == 1 {
			first, second = row, base
		}
		c0, t0 := CPUTime(), time.Now()
		first(b)
		c1, t1 := CPUTime(), time.Now()
		second(b)
		c2, t2 := CPUTime(), time.Now()
		d0, d1, e0, e1 := t1.Sub(t0), t2.Sub(t1), c1-c0, c2-c1
		if i%2 == 1 {
			d0, d1, e0, e1 = d1, d0, e1, e0
		}
		baseTime, rowTime, baseCPU, rowCPU = baseTime+d0, rowTime+d1, baseCPU+e0, rowCPU+e1
		i++
	}
	if i == 0 || baseTime <= 0 {
		return
	}
	b.ReportMetric(float64(rowTime)/float64(baseTime), "ratio")
	if baseCPU > 0 {
		b.ReportMetric(float64(rowCPU)/float64(baseCPU), "cpu-ratio")
	}
	b.ReportMetric(float64(baseTime.Nanoseconds())/float64(i), "base-ns/op")
	b.ReportMetric(float64(rowTime.Nanoseconds())/float64(i), "row-ns/op")
}
