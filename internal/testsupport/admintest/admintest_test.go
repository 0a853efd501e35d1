package admintest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFaultsFired(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/_fakepay/faults" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, `{"rules":[{"fault":"delay","fired":1},{"fault":"hang","fired":2}]}`)
	}))
	defer srv.Close()
	fired, rules := FaultsFired(srv.URL)
	assert.Equal(t, 3, fired)
	assert.Equal(t, 2, rules)

	fired, rules = FaultsFired(srv.URL + "/elsewhere")
	assert.Zero(t, fired+rules, "an unreadable answer reads as nothing fired")
	srv.Close()
	fired, rules = FaultsFired(srv.URL)
	assert.Zero(t, fired+rules, "an unreachable fake reads as nothing fired")
}
