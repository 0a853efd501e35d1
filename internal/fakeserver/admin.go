package fakeserver

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/payonce/payonce"
)

// AdminPrefix is the path prefix of the admin API; no real API uses it.
const AdminPrefix = "/_fakepay/"

// AdminConfig wires the provider-specific admin endpoints.
type AdminConfig struct {
	// SetBalance sets a Coinepay balance; nil answers 404 on /_fakepay/balance.
	SetBalance func(apiKey string, amount payonce.Amount) error
}

// AdminHandler returns the admin API, served under AdminPrefix:
//
//	GET    /_fakepay/ledger    {"operations":[...]}
//	GET    /_fakepay/requests  {"requests":[...]}
//	GET    /_fakepay/stats     {"requests":..,"executed":..,"replayed":..,"conflicts":..,"faults":..}
//	GET    /_fakepay/faults    {"rules":[...]}
//	POST   /_fakepay/faults    add a Rule
//	DELETE /_fakepay/faults    clear the rules
//	GET    /_fakepay/clock     {"now":"..."}
//	POST   /_fakepay/clock     {"advance":"25h"} or {"set":"2030-01-01T00:00:00Z"}
//	POST   /_fakepay/balance   {"api_key":"demo-key","amount":"500.00"}
//	POST   /_fakepay/reset     empty all state
//
// Errors answer {"error":{"code":"..","message":".."}}.
func (e *Engine) AdminHandler(cfg AdminConfig) http.Handler {
	return &adminHandler{e: e, cfg: cfg}
}

type adminHandler struct {
	e   *Engine
	cfg AdminConfig
}

func (a *adminHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resp := a.serve(r)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Date", a.e.clock.Now().UTC().Format(http.TimeFormat))
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}

func adminError(status int, code, msg string) Response {
	return JSON(status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func (a *adminHandler) serve(r *http.Request) Response {
	name := strings.Trim(strings.TrimPrefix(r.URL.Path, AdminPrefix), "/")
	allow := func(methods ...string) bool {
		for _, m := range methods {
			if r.Method == m {
				return true
			}
		}
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxRequestBody))
	if err != nil {
		return adminError(http.StatusRequestEntityTooLarge, "body_too_large", "request body over 1 MiB")
	}
	decode := func(v any) *Response {
		if err := json.Unmarshal(body, v); err != nil {
			resp := adminError(http.StatusBadRequest, "invalid_json", "malformed JSON: "+err.Error())
			return &resp
		}
		return nil
	}
	switch name {
	case "ledger":
		if !allow(http.MethodGet) {
			break
		}
		ops := a.e.ledger.Operations()
		if ops == nil {
			ops = []Operation{}
		}
		return JSON(http.StatusOK, map[string]any{"operations": ops})
	case "stats":
		if !allow(http.MethodGet) {
			break
		}
		return JSON(http.StatusOK, a.e.Stats())
	case "requests":
		if !allow(http.MethodGet) {
			break
		}
		atts := a.e.attempts.All()
		return JSON(http.StatusOK, map[string]any{"requests": atts})
	case "faults":
		switch r.Method {
		case http.MethodGet:
			return JSON(http.StatusOK, map[string]any{"rules": a.e.faults.Rules()})
		case http.MethodPost:
			var rule Rule
			if bad := decode(&rule); bad != nil {
				return *bad
			}
			if err := a.e.faults.Add(rule); err != nil {
				return adminError(http.StatusBadRequest, "invalid_rule", err.Error())
			}
			return JSON(http.StatusCreated, map[string]any{"rules": a.e.faults.Rules()})
		case http.MethodDelete:
			a.e.faults.Clear()
			return JSON(http.StatusOK, map[string]any{"rules": []RuleState{}})
		}
	case "clock":
		if allow(http.MethodPost) {
			var req struct {
				Advance string    `json:"advance"`
				Set     time.Time `json:"set"`
			}
			if bad := decode(&req); bad != nil {
				return *bad
			}
			switch {
			case req.Advance != "":
				d, err := time.ParseDuration(req.Advance)
				if err != nil {
					return adminError(http.StatusBadRequest, "invalid_duration", "advance: want a duration such as \"25h\"")
				}
				a.e.clock.Advance(d)
			case !req.Set.IsZero():
				a.e.clock.Set(req.Set)
			default:
				return adminError(http.StatusBadRequest, "invalid_request", "want advance or set")
			}
		} else if !allow(http.MethodGet) {
			break
		}
		return JSON(http.StatusOK, map[string]any{"now": a.e.clock.Now().UTC().Format(time.RFC3339Nano)})
	case "balance":
		if a.cfg.SetBalance == nil {
			return adminError(http.StatusNotFound, "not_found", "no Coinepay fake on this server")
		}
		if !allow(http.MethodPost) {
			break
		}
		var req struct {
			APIKey string          `json:"api_key"`
			Amount *payonce.Amount `json:"amount"`
		}
		if bad := decode(&req); bad != nil {
			return *bad
		}
		if req.APIKey == "" || req.Amount == nil {
			return adminError(http.StatusBadRequest, "invalid_request", "api_key and amount are required")
		}
		if err := a.cfg.SetBalance(req.APIKey, *req.Amount); err != nil {
			return adminError(http.StatusNotFound, "not_found", err.Error())
		}
		return JSON(http.StatusOK, map[string]any{"api_key": req.APIKey, "amount": *req.Amount})
	case "reset":
		if !allow(http.MethodPost) {
			break
		}
		a.e.Reset()
		return JSON(http.StatusOK, map[string]any{"reset": true})
	default:
		return adminError(http.StatusNotFound, "not_found", "unknown admin path")
	}
	return adminError(http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed")
}

// ErrUnknownAPIKey is returned by a SetBalance hook for a key it does not know.
var ErrUnknownAPIKey = errors.New("unknown api key")

// WithAdmin sends requests under AdminPrefix to admin and every other one to
// api. Unlike http.ServeMux it never answers on its own (ServeMux
// redirects unclean paths such as "/." with an HTML body), so every
// answer keeps the provider's JSON error shape.
func WithAdmin(admin, api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, AdminPrefix) {
			admin.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}
