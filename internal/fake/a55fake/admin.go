package a55fake

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// AdminPrefix is where the A55 fake's own admin calls and pages live,
// under the engine's admin prefix.
const AdminPrefix = fakeserver.AdminPrefix + "a55"

// AdminHandler serves the A55 fake's admin calls and pages and passes
// every other request to next (the engine's admin API), behind the same
// guard (loopback Host, admin token, no cross-site change):
//
//	GET  /_fakepay/a55/accounts                      {"accounts":[{client_id, entity_uuid, merchant_id, wallet_uuid}]}
//	GET  /_fakepay/a55/charges/{charge_uuid}         {"charge":{..},"status":"..","events":[..]}
//	POST /_fakepay/a55/charges/{charge_uuid}/events  {"event":"pix.paid","amount":"..","reason":".."}
//	                                                 -> {"charge":{..},"status":"..","events":[..],"delivery":{..}|null}
//	GET  /_fakepay/a55/answers                       {"rules":[{..answer rule.., "seen":n, "fired":n}]}
//	POST /_fakepay/a55/answers                       add an AnswerRule -> 201 {"rules":[...]}
//	DELETE /_fakepay/a55/answers[?index=N]           remove them all, or the Nth -> {"rules":[...]}
//	GET  /_fakepay/a55/webhooks[?charge_uuid=..]     {"deliveries":[...]}
//	POST /_fakepay/a55/webhooks/resend               {"charge_uuid":".."} -> {"delivery":{...}}
//	POST /_fakepay/a55/webhooks/deliver              make the due attempts now -> {"attempted":n}
//	GET  /_fakepay/a55/3ds/{charge_uuid}             the 3DS challenge page (url_3ds)
//	GET  /_fakepay/a55/pay/{charge_uuid}             the payer's page of a PIX or boleto (charge_payment_url, boleto_url)
//
// Every call first ends what the fake clock has ended (expiries), and so
// does every call of next once it has run (a clock move). A request
// carrying the fake's own OriginHeader (one of its webhook deliveries) is
// refused with 403, whatever Config says.
func (f *Fake) AdminHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.hooks.fromSelf(r) {
			f.refuseSelf(w)
			return
		}
		f.sweep()
		rest, ok := strings.CutPrefix(r.URL.Path, AdminPrefix)
		if !ok || (rest != "" && rest[0] != '/') {
			next.ServeHTTP(w, r)
			f.sweep()
			return
		}
		rest = strings.Trim(rest, "/")
		if f.servePage(w, r, rest) {
			return
		}
		resp := f.serveAdmin(r, rest)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Date", f.e.Clock().Now().UTC().Format(http.TimeFormat))
		w.WriteHeader(resp.Status)
		_, _ = w.Write(resp.Body)
	})
}

func adminError(status int, code, msg string) fakeserver.Response {
	return fakeserver.JSON(status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

// readAdminBody decodes an admin call's JSON body into v, refusing
// unknown members; an empty body leaves v as it is.
func readAdminBody(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func (f *Fake) serveAdmin(r *http.Request, rest string) fakeserver.Response {
	method := func(m string) *fakeserver.Response {
		if r.Method != m {
			resp := adminError(http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed")
			return &resp
		}
		return nil
	}
	if id, ok := strings.CutPrefix(rest, "charges/"); ok {
		if id, ok := strings.CutSuffix(id, "/events"); ok && id != "" && !strings.Contains(id, "/") {
			if bad := method(http.MethodPost); bad != nil {
				return *bad
			}
			return f.serveTrigger(r, id)
		}
		if id == "" || strings.Contains(id, "/") {
			return adminError(http.StatusNotFound, "not_found", "unknown admin path")
		}
		if bad := method(http.MethodGet); bad != nil {
			return *bad
		}
		st, err := f.ChargeState(id)
		if err != nil {
			return adminError(http.StatusNotFound, "not_found", err.Error())
		}
		return stateAnswer(http.StatusOK, st, false)
	}
	switch rest {
	case "answers":
		return f.serveAnswers(r)
	case "accounts":
		if bad := method(http.MethodGet); bad != nil {
			return *bad
		}
		return fakeserver.JSON(http.StatusOK, map[string]any{"accounts": f.Accounts()})
	case "webhooks":
		if bad := method(http.MethodGet); bad != nil {
			return *bad
		}
		return fakeserver.JSON(http.StatusOK, map[string]any{"deliveries": f.WebhookDeliveries(r.URL.Query().Get("charge_uuid"))})
	case "webhooks/deliver":
		if bad := method(http.MethodPost); bad != nil {
			return *bad
		}
		return fakeserver.JSON(http.StatusOK, map[string]any{"attempted": f.DeliverDueWebhooks()})
	case "webhooks/resend":
		if bad := method(http.MethodPost); bad != nil {
			return *bad
		}
		var in struct {
			ChargeUUID string `json:"charge_uuid"`
		}
		if err := readAdminBody(r, &in); err != nil || in.ChargeUUID == "" {
			return adminError(http.StatusBadRequest, "invalid_request", `want {"charge_uuid":".."}`)
		}
		d, err := f.ResendWebhook(in.ChargeUUID)
		switch {
		case errors.Is(err, ErrUnknownCharge):
			return adminError(http.StatusNotFound, "not_found", err.Error())
		case err != nil:
			return adminError(http.StatusConflict, "no_webhook_url", err.Error())
		}
		return fakeserver.JSON(http.StatusAccepted, map[string]any{"delivery": d})
	}
	return adminError(http.StatusNotFound, "not_found", "unknown admin path")
}

// serveTrigger answers POST /_fakepay/a55/charges/{charge_uuid}/events.
func (f *Fake) serveTrigger(r *http.Request, chargeUUID string) fakeserver.Response {
	var in struct {
		Event  Event  `json:"event"`
		Amount string `json:"amount"`
		Reason string `json:"reason"`
	}
	if err := readAdminBody(r, &in); err != nil || in.Event == "" {
		return adminError(http.StatusBadRequest, "invalid_request", `want {"event":"pix.paid"} (and "amount" for a refund, "reason" for a chargeback)`)
	}
	st, err := f.Trigger(chargeUUID, in.Event, TriggerOptions{Amount: in.Amount, Reason: in.Reason})
	switch {
	case errors.Is(err, ErrUnknownCharge):
		return adminError(http.StatusNotFound, "not_found", err.Error())
	case errors.Is(err, ErrUnknownEvent), errors.Is(err, ErrInvalidAmount):
		return adminError(http.StatusBadRequest, "invalid_request", err.Error())
	case err != nil:
		return adminError(http.StatusConflict, "event_not_allowed", err.Error())
	}
	return stateAnswer(http.StatusOK, st, true)
}

// stateAnswer is {"charge":{..},"status":"..","events":[..]}, with
// "delivery" after a trigger.
func stateAnswer(status int, st TriggerResult, delivery bool) fakeserver.Response {
	out := map[string]any{"charge": json.RawMessage(st.Charge), "status": st.Status, "events": st.Events}
	if delivery {
		out["delivery"] = st.Delivery
	}
	return fakeserver.JSON(status, out)
}
