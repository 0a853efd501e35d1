package fakeserver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestHoldTime(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name           string
		asked          time.Duration
		byOption, onCI bool
		deadline       time.Time
		want           time.Duration
		why            string
	}{
		{"no deadline", time.Hour, true, false, time.Time{}, time.Hour, ""},
		{"deadline far away", time.Minute, true, false, now.Add(10 * time.Minute), time.Minute, ""},
		{"capped before the deadline", 10 * time.Minute, true, false, now.Add(10 * time.Minute), 10*time.Minute - HoldMargin, "-timeout"},
		{"deadline within the margin", time.Hour, false, false, now.Add(HoldMargin), 0, "-timeout"},
		{"deadline passed", time.Hour, false, false, now.Add(-time.Second), 0, "-timeout"},
		{"option on CI", time.Hour, true, true, time.Time{}, 0, CIEnv},
		{"environment on CI", time.Hour, false, true, time.Time{}, time.Hour, ""},
		{"none asked", 0, false, false, time.Time{}, 0, "no hold"},
	} {
		d, why := HoldTime(c.asked, c.byOption, c.onCI, now, c.deadline)
		assert.Equal(t, c.want, d, c.name)
		if c.why == "" {
			assert.Empty(t, why, c.name)
		} else {
			assert.Contains(t, why, c.why, c.name)
		}
	}
	for v, want := range map[string]bool{"": false, "0": false, "false": false, " FALSE ": false, "true": true, "1": true, "yes": true} {
		assert.Equal(t, want, OnCI(v), "%q", v)
	}
	assert.True(t, TestDeadline(struct{}{}).IsZero())
	if at, ok := t.Deadline(); ok {
		assert.Equal(t, at, TestDeadline(t))
	}
}
