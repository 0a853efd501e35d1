package chaos

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// defaultSegmentOps is how many operations the run starts before it waits
// for them all, resumes the parked ones and reconciles them against the
// new part of the ledger. Memory follows a segment, not the whole run.
const defaultSegmentOps = 5_000

// localMaxOperations caps what an in-process fake keeps (full stored
// answers, ledger, operations index, resources): three segments, so that
// every key of the segment being run still has its answer and every
// charge its row, while older keys stay as markers that refuse a second
// execution.
func localMaxOperations(segment int) int { return 3 * segment }

// localFake is one in-process fake provider: an engine, the provider's
// handler on it and a loopback server. The run reads its ledger as it
// goes (newOps), so the ledger's cap never drops an unread operation.
type localFake struct {
	engine *fakeserver.Engine
	srv    *httptest.Server
	URL    string
	read   uint64 // Seq of the last ledger operation read
}

func newLocalFake(seed uint64, maxOps int, handler func(*fakeserver.Engine) http.Handler) *localFake {
	e := fakeserver.New(fakeserver.Options{Seed: seed, Seeded: true, MaxOperations: maxOps})
	srv := httptest.NewUnstartedServer(handler(e))
	fakeserver.Harden(srv.Config)
	srv.Start()
	e.AddListenAddr(srv.Listener.Addr())
	return &localFake{engine: e, srv: srv, URL: srv.URL}
}

func (f *localFake) close() {
	f.engine.Close()
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// addFaults adds the run's fault rules.
func (f *localFake) addFaults(rules []fakeserver.Rule) error {
	for _, r := range rules {
		if err := f.engine.Faults().Add(r); err != nil {
			return err
		}
	}
	return nil
}

// newOps returns the ledger's operations since the last call. An
// operation the cap dropped before it was read is an error: the run could
// not check it.
func (f *localFake) newOps() ([]fakeserver.Operation, error) {
	var out []fakeserver.Operation
	for {
		ops, _ := f.engine.Ledger().Page(fakeserver.LedgerFilter{After: f.read})
		if len(ops) == 0 {
			return out, nil
		}
		if ops[0].Seq != f.read+1 {
			return nil, fmt.Errorf("chaos: the ledger dropped operations %d to %d before the run read them", f.read+1, ops[0].Seq-1)
		}
		for _, op := range ops {
			out = append(out, fakeserver.Operation{Provider: op.Provider, Kind: op.Kind, IdempotencyKey: op.IdempotencyKey, ID: op.ID})
		}
		f.read = ops[len(ops)-1].Seq
	}
}
