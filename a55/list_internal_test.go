package a55

import (
	"net/http"
	"testing"
)

// FuzzChargeListDecoding feeds arbitrary list answers to the codec: it must
// never panic, and a page it accepts is consistent.
func FuzzChargeListDecoding(f *testing.F) {
	f.Add([]byte(`{"data":[{"charge_uuid":"c1","status":"confirmed","amount":"1.00"}],"page":1,"limit":20,"total":1,"total_pages":1}`))
	f.Add([]byte(`[{"charge_uuid":"c1"},null]`))
	f.Add([]byte(`{"items":[],"page_size":-3,"count":-1,"total_pages":null}`))
	f.Add([]byte(`{"results":[{"charge_uuid":"x","card":{"number":"4111111111111111"}}],"per_page":2}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var l chargeList
		if err := (Codec{}).DecodeSuccess(http.StatusOK, http.Header{}, body, &l); err != nil {
			return
		}
		if l.total < -1 || l.totalPages < -1 || l.limit < 0 {
			t.Fatalf("inconsistent page: total %d, pages %d, limit %d", l.total, l.totalPages, l.limit)
		}
	})
}
