package a55

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
)

// reference is the part of the documented wire contract
// (testdata/a55/reference.json) the status and code tables answer to.
type reference struct {
	Statuses []struct {
		Name string `json:"name"`
	} `json:"statuses"`
	Codes []struct {
		Code   string `json:"code"`
		Action string `json:"action"`
	} `json:"codes"`
}

func readReference(t *testing.T) reference {
	t.Helper()
	b, err := os.ReadFile("../testdata/a55/reference.json")
	require.NoError(t, err)
	var r reference
	require.NoError(t, json.Unmarshal(b, &r))
	require.NotEmpty(t, r.Statuses)
	require.NotEmpty(t, r.Codes)
	return r
}

// Statuses() is the documented list, no more and no less: the webhook
// page's twelve and those other pages use (declined, expired, chargeback,
// pre_captured).
func TestStatusesAreTheDocumentedOnes(t *testing.T) {
	var want []Status
	for _, s := range readReference(t).Statuses {
		want = append(want, Status(s.Name))
	}
	assert.ElementsMatch(t, want, Statuses())
	for _, s := range []Status{StatusDeclined, StatusExpired, StatusChargeback, StatusPreCaptured} {
		assert.True(t, s.Known(), s)
	}
	assert.False(t, Status("new").Known())
	assert.False(t, Status("").Known())
}

// A status decides in any case: Is, Known and Failed read "ERROR",
// "Declined" and " error " as A55's lower-case names.
func TestStatusComparesWithoutCase(t *testing.T) {
	for _, s := range []Status{"error", "ERROR", "Error", " error ", "declined", "Declined", "DECLINED"} {
		assert.True(t, s.Failed(), "%q", s)
		assert.True(t, s.Known(), "%q", s)
	}
	for _, s := range []Status{"confirmed", "CONFIRMED", "pending", "errors", "error_x", "", "refund_error", "REFUND_ERROR"} {
		assert.False(t, s.Failed(), "%q", s)
	}
	assert.True(t, Status("Pre_Captured").Is(StatusPreCaptured))
	assert.Equal(t, StatusChargeback, Status("CHARGEBACK").canonical())
	assert.Empty(t, Status("chargebacks").canonical())
	for s, settled := range map[Status]bool{"confirmed": true, "PAID": true, "canceled": true, "expired": true, "refunded": true,
		"error": true, "Declined": true, "pending": false, "ISSUED": false, "something_new": false, "": false} {
		assert.Equal(t, settled, s.settled(), "%q", s)
	}
}

// A created charge answered 2xx in status "error" or "declined", in any
// case, is a failure that keeps the charge, never a success.
func TestCreatedChargeInAFailedStatusOfAnyCaseFails(t *testing.T) {
	for status, kind := range map[string]error{
		"error": ErrChargeFailed, "ERROR": ErrChargeFailed, "Error": ErrChargeFailed,
		"declined": ErrCardDeclined, "Declined": ErrCardDeclined, "DECLINED": ErrCardDeclined,
	} {
		t.Run(status, func(t *testing.T) {
			u := setup(t)
			u.mux.HandleFunc("POST "+PathCharges, func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, 200, `{"charge_uuid":"c-`+status+`","status":"`+status+`","amount":"100.00"}`)
			})
			ch, err := u.client.Charges.Create(context.Background(), refCharge())
			require.Error(t, err)
			assert.Nil(t, ch)
			assert.ErrorIs(t, err, kind)
			got, ok := ChargeFromError(err)
			require.True(t, ok)
			assert.Equal(t, "c-"+status, got.UUID)
			assert.False(t, payonce.IsResumable(err))
		})
	}
}

// A list's status filter is checked and sent as A55 spells it, and the
// client's own filter of the answer compares without case.
func TestListStatusFilterWithoutCase(t *testing.T) {
	u := setup(t)
	var filter string
	u.mux.HandleFunc("GET "+PathChargeList, func(w http.ResponseWriter, r *http.Request) {
		filter = r.URL.Query().Get("filter")
		writeJSON(w, 200, `{"data":[{"charge_uuid":"a","status":"DECLINED"},{"charge_uuid":"b","status":"confirmed"}]}`)
	})
	page, err := u.client.Charges.List(context.Background(), &ChargeListOptions{WalletUUID: "w-1", Limit: 10, Status: "Declined"})
	require.NoError(t, err)
	assert.Equal(t, "status:declined", filter)
	require.Len(t, page.Charges, 1)
	assert.Equal(t, "a", page.Charges[0].UUID)
	_, err = u.client.Charges.List(context.Background(), &ChargeListOptions{WalletUUID: "w-1", Limit: 10, Status: "declined-ish"})
	require.ErrorIs(t, err, payonce.ErrInvalidRequest)
}

// A webhook's identity does not change with the case its status is
// spelled in: a redelivery that spells it otherwise is the same event.
func TestWebhookKeyWithoutCase(t *testing.T) {
	a := WebhookEvent{ChargeUUID: "c1", Status: "CONFIRMED"}
	b := WebhookEvent{ChargeUUID: "c1", Status: "confirmed"}
	assert.Equal(t, b.Key(), a.Key())
	assert.True(t, strings.HasSuffix(a.Key(), "/confirmed"))
	assert.Equal(t, "c1/something_new", (&WebhookEvent{ChargeUUID: "c1", Status: "something_new"}).Key())
}
