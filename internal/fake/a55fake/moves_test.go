package a55fake_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/a55fake"
)

func refundPath(charge, wallet string) string { return chargePath + charge + "/refund/" + wallet + "/" }
func cancelPath(charge, wallet string) string { return chargePath + charge + "/cancel/" + wallet + "/" }

// A pre-authorisation is captured once (part of it releases the rest)
// and is then paid; a captured charge is refunded in part (the status
// stays, amount_remaining falls) and in full (refunded); nothing more.
func TestCaptureAndRefunds(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	w := h.acct.WalletUUID
	id := h.create(t, chargePath, h.body("credit_card", with(card("4024007153763191"), map[string]any{"capture": false})))["charge_uuid"].(string)

	r := h.do(t, http.MethodPost, refundPath(id, w), "", nil)
	assert.Equal(t, http.StatusConflict, r.status, "nothing captured to refund: %s", r.body)

	r = h.do(t, http.MethodPost, capturePath, "", map[string]any{"charge_uuid": id})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status, "the capture page requires wallet_uuid")
	assert.Equal(t, []string{"wallet_uuid"}, r.details(t))
	r = h.do(t, http.MethodPost, capturePath, "", map[string]any{"charge_uuid": id, "wallet_uuid": w, "amount": "100.00"})
	assert.Equal(t, http.StatusBadRequest, r.status, "amount is a number")
	r = h.do(t, http.MethodPost, capturePath, "", map[string]any{"charge_uuid": id, "wallet_uuid": w, "amount": json.Number("150.01")})
	assert.Equal(t, http.StatusConflict, r.status, "above the authorised amount")

	r = h.do(t, http.MethodPost, capturePath, keyN("capture", 1), map[string]any{"charge_uuid": id, "wallet_uuid": w, "amount": json.Number("100.00")})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	out := r.obj(t)
	assert.Equal(t, "paid", out["status"])
	assert.Equal(t, json.Number("100.00"), out["amount_remaining"])
	r = h.do(t, http.MethodPost, capturePath, "", map[string]any{"charge_uuid": id, "wallet_uuid": w})
	assert.Equal(t, http.StatusConflict, r.status, "captured once")

	r = h.do(t, http.MethodPost, refundPath(id, w), keyN("refund", 1), map[string]any{"amount": json.Number("40.00"), "reason": "one item returned"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	out = r.obj(t)
	assert.Equal(t, "paid", out["status"], "a partial refund keeps the status")
	assert.Equal(t, json.Number("60.00"), out["amount_remaining"])
	r = h.do(t, http.MethodPost, refundPath(id, w), "", map[string]any{"amount": json.Number("60.01")})
	assert.Equal(t, http.StatusConflict, r.status, "above amount_remaining")
	r = h.do(t, http.MethodPost, refundPath(id, w), "", map[string]any{"amount": json.Number("1.001")})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Equal(t, "AMOUNT_INVALID", r.code(t))
	r = h.do(t, http.MethodPost, refundPath(id, w), "", map[string]any{"amount": json.Number("1.00"), "wallet_uuid": w})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status, "both UUIDs in the path only")
	assert.Equal(t, []string{"wallet_uuid"}, r.details(t))

	r = h.do(t, http.MethodPost, refundPath(id, w), keyN("refund", 2), "")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	out = r.obj(t)
	assert.Equal(t, "refunded", out["status"], "no body: the full remaining amount")
	assert.Equal(t, json.Number("0.00"), out["amount_remaining"])
	r = h.do(t, http.MethodPost, refundPath(id, w), "", nil)
	assert.Equal(t, http.StatusConflict, r.status)

	var kinds []string
	for _, op := range h.e.Ledger().Operations() {
		kinds = append(kinds, op.Kind+" "+op.Amount)
	}
	assert.Equal(t, []string{"charge.create 150.00", "charge.capture 100.00", "charge.refund 40.00", "charge.refund 60.00"}, kinds)
}

// Cancel takes an issued, pending (3DS) or authorised charge; a settled
// or canceled one is 409, one in no cancellable state 400, each
// CANCEL_NOT_ALLOWED in the charge-level shape. Success answers the
// cancel page's empty message object.
func TestCancel(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	w := h.acct.WalletUUID
	dev := map[string]any{"device_info": map[string]any{"ip_address": "192.0.2.1"}, "threeds_authentication": true}
	for _, body := range []map[string]any{
		h.body("pix", nil),
		h.body("boleto", nil),
		h.body("credit_card", with(card("4024007153763191"), dev)),
		h.body("credit_card", with(card("4024007153763191"), map[string]any{"capture": false})),
	} {
		id := h.create(t, chargePath, body)["charge_uuid"].(string)
		r := h.do(t, http.MethodPost, cancelPath(id, w), keyN("cancel-"+id, 0), map[string]any{"reason": "customer asked"})
		require.Equal(t, http.StatusOK, r.status, "%v: %s", body["type_charge"], r.body)
		out := r.obj(t)
		assert.Equal(t, "canceled", out["status"])
		assert.Equal(t, map[string]any{}, out["message"])
		r = h.do(t, http.MethodPost, cancelPath(id, w), "", nil)
		assert.Equal(t, http.StatusConflict, r.status, "already canceled")
		assert.Contains(t, string(r.body), "CANCEL_NOT_ALLOWED")
	}
	settled := h.create(t, chargePath, h.body("credit_card", card("4024007153763191")))["charge_uuid"].(string)
	r := h.do(t, http.MethodPost, cancelPath(settled, w), "", nil)
	assert.Equal(t, http.StatusConflict, r.status)
	failed := h.do(t, http.MethodPost, chargePath, "", h.body("credit_card", card("4024007153763192"))).obj(t)["charge_uuid"].(string)
	r = h.do(t, http.MethodPost, cancelPath(failed, w), "", nil)
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, string(r.body), "CANCEL_NOT_ALLOWED")
	r = h.do(t, http.MethodPost, cancelPath(settled, "another-wallet"), "", nil)
	assert.Equal(t, http.StatusNotFound, r.status)
}

// The guide's body forms, identifiers in the body, amount as a number
// or a decimal string, stay served.
func TestGuideBodyForms(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	id := h.create(t, chargePath, h.body("credit_card", card("4024007153763191")))["charge_uuid"].(string)
	r := h.do(t, http.MethodPost, chargePath+"refund/", keyN("guide-refund", 0), map[string]any{"charge_uuid": id, "amount": "50.00"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, json.Number("100.00"), r.obj(t)["amount_remaining"])
	r = h.do(t, http.MethodPost, chargePath+"refund/", "", map[string]any{"amount": "1.00"})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Equal(t, []string{"charge_uuid"}, r.details(t))
	pix := h.create(t, chargePath, h.body("pix", nil))["charge_uuid"].(string)
	r = h.do(t, http.MethodPost, chargePath+"cancel/", keyN("guide-cancel", 0), map[string]any{"charge_uuid": pix, "wallet_uuid": h.acct.WalletUUID})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "canceled", r.obj(t)["status"])
}
