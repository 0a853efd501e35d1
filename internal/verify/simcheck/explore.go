package simcheck

import (
	"fmt"
	"strings"
)

// choice is one decision a run took: option idx of n.
type choice struct {
	idx, n   int
	label    string
	scripted bool // taken from the scenario's script
}

// explorer replays a prefix of choices and records the ones a run takes.
type explorer struct {
	prefix    []int
	trace     []choice
	maxDepth  int  // choice points with more than one option explored
	truncated bool // a choice point past maxDepth had more than one option
	branching int  // choice points of this run with more than one option
	// script names the options the first branching choices take (a
	// counterexample's path); the exploration goes on from there.
	script    []string
	scriptPos int
	diverged  string // a scripted option no choice point offered
}

// choose returns the option to take among n, labels naming them for a
// counterexample's trace.
func (x *explorer) choose(n int, label func(i int) string) int {
	if n <= 0 {
		panic("simcheck: choose among no options")
	}
	i := 0
	if len(x.trace) < len(x.prefix) {
		i = x.prefix[len(x.trace)]
		if i >= n {
			panic(fmt.Sprintf("simcheck: replay diverged at choice %d (%d of %d)", len(x.trace), i, n))
		}
	}
	if n > 1 && x.scriptPos < len(x.script) {
		want := x.script[x.scriptPos]
		x.scriptPos++
		i = -1
		for k := range n {
			if label(k) == want {
				i = k
			}
		}
		if i < 0 {
			if x.diverged == "" {
				x.diverged = fmt.Sprintf("step %d: no option %q", x.scriptPos, want)
			}
			i = 0
		}
		x.trace = append(x.trace, choice{idx: i, n: 1, label: label(i), scripted: true})
		return i
	}
	if n > 1 {
		x.branching++
		if x.branching > x.maxDepth {
			// Past the bound the run goes on with the first option only.
			x.truncated = true
			n = 1
			i = 0
		}
	}
	x.trace = append(x.trace, choice{idx: i, n: n, label: label(i)})
	return i
}

// next returns the prefix of the next run, false when every run was made.
func (x *explorer) next() ([]int, bool) {
	for k := len(x.trace) - 1; k >= 0; k-- {
		if c := x.trace[k]; c.idx+1 < c.n {
			p := make([]int, k+1)
			for j := range k {
				p[j] = x.trace[j].idx
			}
			p[k] = c.idx + 1
			return p, true
		}
	}
	return nil, false
}

// path is the run's choices, one per line, for a counterexample.
func (x *explorer) path() string {
	var b strings.Builder
	k := 0
	for _, c := range x.trace {
		if c.n > 1 || c.scripted {
			fmt.Fprintf(&b, "  %2d. %q\n", k, c.label)
			k++
		}
	}
	return b.String()
}

// Stats is what an exploration covered.
type Stats struct {
	Runs      int  // complete interleavings run (each a distinct choice sequence)
	States    int  // distinct states seen (journal rows, provider state, workers' positions)
	Steps     int  // scheduled steps over all runs
	MaxChoice int  // the longest run's branching choice points
	Truncated bool // some run reached the depth bound with options left
	Violating int  // runs that broke an invariant
	Pruned    int  // runs cut at a state an earlier run had reached
}

// Violation is a counterexample: an invariant that failed on one path.
type Violation struct {
	Scenario string
	Run      int
	Problems []string
	Path     string // the choices that lead to it
	Log      string // what happened, step by step
}

// Error prints the problems, the choices that lead to them and the steps.
func (v *Violation) Error() string {
	return fmt.Sprintf("simcheck: %s, run %d: %s\nchoices:\n%ssteps:\n%s",
		v.Scenario, v.Run, strings.Join(v.Problems, "; "), v.Path, v.Log)
}
