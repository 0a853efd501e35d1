package payonce_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
	"github.com/payonce/payonce/journal"
	"github.com/payonce/payonce/journal/journaltest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookupNamedListsTheFirstFew(t *testing.T) {
	id := func(s string) string { return "id-" + s }
	assert.Equal(t, "", payonce.LookupNamed([]string{}, id))
	assert.Equal(t, "id-a, id-b", payonce.LookupNamed([]string{"a", "b"}, id))
	assert.Equal(t, "id-1, id-2, id-3, id-4, id-5", payonce.LookupNamed([]string{"1", "2", "3", "4", "5", "6", "7"}, id))
}

func TestLookupWindowTextIsUTC(t *testing.T) {
	from := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	assert.Equal(t, "created 2026-01-02T02:04:05Z to 2026-01-02T02:04:05Z", payonce.LookupWindowText(from, from))
}

func TestSettledOutcome(t *testing.T) {
	assert.Equal(t, "succeeded", payonce.JournalEntry{State: payonce.JournalSucceeded}.SettledOutcome())
	assert.Equal(t, "failed", payonce.JournalEntry{State: payonce.JournalFailed}.SettledOutcome())
	assert.Equal(t, "not_executed", payonce.JournalEntry{State: payonce.JournalFailed, ErrorKind: payonce.KindName(payonce.ErrNotExecuted)}.SettledOutcome())
}

func TestCallKind(t *testing.T) {
	assert.ErrorIs(t, payonce.CallKind(errors.New("reset")), payonce.ErrTransport)
	assert.ErrorIs(t, payonce.CallKind(&payonce.APIError{Kind: payonce.ErrRateLimited}), payonce.ErrRateLimited)
}

// record is a provider's record in these tests: its ID, the key it
// reports ("" none) and the description it was made with.
type record struct{ id, key, desc string }

// policy matches records by the description an entry's summary holds.
type policy struct{}

func (policy) ID(r record) string { return r.id }
func (policy) Exact(e payonce.JournalEntry, r record) bool {
	return r.key != "" && r.key == e.Key
}
func (policy) CouldMake(o payonce.JournalEntry, r record, _, _ time.Time) bool {
	if o.ResourceID != "" {
		return false // its outcome is known, and it made one record
	}
	var s struct{ Description string }
	if o.Summary == "" || json.Unmarshal([]byte(o.Summary), &s) != nil {
		return true
	}
	return s.Description == r.desc
}
func (policy) ResourceOf(o payonce.JournalEntry) string {
	var v struct{ ID string }
	_ = json.Unmarshal(o.Result, &v)
	return v.ID
}

var t0 = time.Now().UTC().Truncate(time.Second)

// world is a memory journal holding entry "A" in doubt, and how to add
// others of its scope and operation.
type world struct {
	t *testing.T
	j *journal.Memory
	a payonce.JournalEntry
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, j: journal.NewMemory()}
	w.a = w.add("A", `{"Description":"shirt"}`, true)
	return w
}

// add reserves ref with summary, sent or not.
func (w *world) add(ref, summary string, sent bool) payonce.JournalEntry {
	e := journaltest.Entry("s", ref)
	e.Summary, e.Sent, e.KeyCreated, e.CreatedAt, e.UpdatedAt = summary, sent, t0, t0, t0
	got, _, err := w.j.Reserve(w.t.Context(), e)
	require.NoError(w.t, err)
	return got
}

// settle records ref's outcome.
func (w *world) settle(e payonce.JournalEntry, st payonce.JournalState, resource, result string, notExecuted bool) {
	up := e
	up.State, up.ResourceID, up.Result = st, resource, []byte(result)
	if notExecuted {
		up.ErrorKind = payonce.KindName(payonce.ErrNotExecuted)
	}
	require.NoError(w.t, w.j.Update(w.t.Context(), up))
}

func (w *world) sift(found ...record) payonce.LookupSift[record] {
	from, to := corekit.LookupWindow(0, w.a.KeyCreated, w.a.CreatedAt, w.a.UpdatedAt)
	s, _, err := payonce.SiftLookup(w.t.Context(), w.j, w.a, found, policy{}, 0, from, to, 24*time.Hour)
	require.NoError(w.t, err)
	return s
}

// rivals is the records contested, each with its rivals.
func rivals(s payonce.LookupSift[record]) map[string][]string {
	out := map[string][]string{}
	for _, c := range s.Contested {
		out[c.ID] = c.Rivals
	}
	return out
}

func ids(rs []record) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.id)
	}
	return out
}

// A record another entry holds as its outcome is left out, and said so;
// one the entry itself holds (a declined charge before a success) stays.
func TestSiftLeavesOutAnotherEntrysOutcome(t *testing.T) {
	w := newWorld(t)
	w.settle(w.add("B", `{"Description":"shirt"}`, true), payonce.JournalSucceeded, "ch_b", `{"ID":"ch_b"}`, false)
	w.settle(w.a, payonce.JournalFailed, "ch_a_declined", `{"ID":"ch_a_declined"}`, false)
	s := w.sift(record{id: "ch_b", desc: "shirt"}, record{id: "ch_a_declined", desc: "shirt"})
	assert.Equal(t, []string{"ch_a_declined"}, ids(s.Kept))
	assert.Empty(t, s.Contested, "B's outcome is known: it made nothing else")
	assert.Equal(t, map[string]string{"ch_b": "B"}, s.Held)
	assert.Contains(t, s.Note(), `ch_b is "B"'s`)

	many := payonce.LookupSift[record]{Held: map[string]string{}}
	for i := range 40 {
		many.Held[fmt.Sprintf("ch_%02d_%s", i, strings.Repeat("x", 200))] = strings.Repeat("r", 200)
	}
	assert.LessOrEqual(t, len(many.Note()), 490, "a reason holds it")
	assert.Contains(t, many.Note(), "outcomes (40)")
}

// A record another entry in doubt could have made is contested, with
// its rivals; the error a lookup then gives names them. One no other
// entry could have made (another description), or that another entry
// could have made but never sent or never ran, is kept.
func TestSiftContestsARecordAnotherEntryCouldHaveMade(t *testing.T) {
	w := newWorld(t)
	w.add("B", `{"Description":"shirt"}`, true)
	w.add("C", `{"Description":"shirt"}`, true)
	s := w.sift(record{id: "ch_1", desc: "shirt"})
	assert.Empty(t, s.Kept)
	assert.Equal(t, map[string][]string{"ch_1": {"B", "C"}}, rivals(s))
	assert.Contains(t, s.Contested[0].Ambiguous("A").Error(), `ch_1 could be the outcome of "B", "C" as well`)

	w = newWorld(t)
	w.add("other-item", `{"Description":"socks"}`, true)
	w.add("never-sent", `{"Description":"shirt"}`, false)
	w.settle(w.add("not-executed", `{"Description":"shirt"}`, true), payonce.JournalFailed, "", "", true)
	s = w.sift(record{id: "ch_1", desc: "shirt"})
	assert.Equal(t, []string{"ch_1"}, ids(s.Kept))
	assert.Empty(t, s.Contested)

	w = newWorld(t)
	w.add("no-summary", "", true)
	s = w.sift(record{id: "ch_1", desc: "shirt"})
	assert.Equal(t, map[string][]string{"ch_1": {"no-summary"}}, rivals(s), "an entry without a summary could have made anything")
}

// An entry settled before the journal kept resource IDs is placed by
// the answer it stored: its record is left out, and it contests no
// other. A masked ID in that answer places nothing.
func TestSiftReadsOldOutcomesFromTheirAnswers(t *testing.T) {
	w := newWorld(t)
	w.settle(w.add("old", `{"Description":"shirt"}`, true), payonce.JournalSucceeded, "", `{"ID":"ch_old"}`, false)
	s := w.sift(record{id: "ch_old", desc: "shirt"}, record{id: "ch_a", desc: "shirt"})
	assert.Equal(t, []string{"ch_a"}, ids(s.Kept))
	assert.Equal(t, "old", s.Held["ch_old"])

	w = newWorld(t)
	w.settle(w.add("masked", `{"Description":"shirt"}`, true), payonce.JournalSucceeded, "", `{"ID":"************0005"}`, false)
	s = w.sift(record{id: "ch_a", desc: "shirt"})
	assert.Equal(t, map[string][]string{"ch_a": {"masked"}}, rivals(s), "an outcome redaction masked is unknown")
}

// A record that carries the entry's own mark is the entry's, whatever
// else the journal holds.
func TestSiftKeepsTheEntrysOwnMark(t *testing.T) {
	w := newWorld(t)
	w.add("B", `{"Description":"shirt"}`, true)
	s := w.sift(record{id: "ch_1", key: w.a.Key, desc: "shirt"})
	assert.Equal(t, []string{"ch_1"}, ids(s.Kept))
	assert.Empty(t, s.Contested)
}

// manyAlikes answers more look-alikes than a lookup weighs.
type manyAlikes struct{ payonce.JournalFinder }

func (manyAlikes) Holders(context.Context, string, string) ([]payonce.JournalEntry, error) {
	return nil, nil
}

func (manyAlikes) LookAlikes(_ context.Context, q payonce.LookAlikeQuery) ([]payonce.JournalEntry, error) {
	return make([]payonce.JournalEntry, q.Limit), nil
}

func TestSiftRefusesTooManyLookAlikes(t *testing.T) {
	e := journaltest.Entry("s", "A")
	_, kind, err := payonce.SiftLookup(t.Context(), manyAlikes{}, e, []record{{id: "ch_1"}}, policy{}, 0, t0, t0, 0)
	require.Error(t, err)
	assert.ErrorIs(t, kind, payonce.ErrLookupAmbiguous)
	assert.Contains(t, err.Error(), "more than")
}

// A lookup through a journal without JournalFinder is refused.
func TestLookupFinderNeedsAJournalFinder(t *testing.T) {
	finder := func(j payonce.Journal) (payonce.JournalFinder, error) {
		c, err := payonce.NewClient(payonce.WithJournal(j), payonce.WithScope("s"), payonce.WithBaseURL("https://lookup.invalid"))
		require.NoError(t, err)
		return c.LookupFinder("A")
	}
	_, err := finder(struct{ payonce.Journal }{journal.NewMemory()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "JournalFinder")
	f, err := finder(journal.NewMemory())
	require.NoError(t, err)
	assert.NotNil(t, f)
}
