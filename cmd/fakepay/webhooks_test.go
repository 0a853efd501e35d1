package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/a55"
)

// -a55-webhook-secret signs the A55 fake's webhooks, and the webhook admin
// calls are served beside the engine's.
func TestWebhookSecretFlag(t *testing.T) {
	base := start(t, "-a55-webhook-secret", "flag-secret-1")
	var verified, failed atomic.Int32
	got := make(chan struct{}, 16)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { got <- struct{}{} }()
		v, _ := a55.NewWebhookVerifier("flag-secret-1", nil)
		if _, err := v.Parse(r); err != nil {
			failed.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		verified.Add(1)
	}))
	defer rc.Close()

	token := demoToken(t, base)

	req, err := http.NewRequest(http.MethodPost, base+chargePath, strings.NewReader(
		`{"amount":"10.00","currency":"BRL","type_charge":"pix","webhook_url":"`+rc.URL+`/hook"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	resp, err = http.Post(base+"/_fakepay/a55/webhooks/deliver", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	select {
	case <-got: // the delivery reached the receiver
	case <-time.After(30 * time.Second): // only guards a bug
		t.Fatal("no webhook delivery reached the receiver")
	}
	assert.Equal(t, int32(1), verified.Load())
	assert.Zero(t, failed.Load())
}

func TestWebhookFlagsParse(t *testing.T) {
	o, err := parseFlags([]string{"-a55-webhook-any-host"}, nil)
	require.NoError(t, err)
	assert.True(t, o.webhookAnyHost)
	assert.Equal(t, "demo-webhook-secret", o.webhookSecret)
}

// fakepay never delivers a webhook to itself: a charge aimed at its reset
// endpoint wipes nothing, one aimed at its own listener is blocked, and
// -a55-webhook-allow-self lets the latter through (never the former).
func TestWebhookToItselfIsBlocked(t *testing.T) {
	for _, allowSelf := range []bool{false, true} {
		var args []string
		if allowSelf {
			args = append(args, "-a55-webhook-allow-self")
		}
		base := start(t, args...)
		token := demoToken(t, base)
		charge := func(hook string) string {
			req, err := http.NewRequest(http.MethodPost, base+chargePath, strings.NewReader(
				`{"amount":"10.00","currency":"BRL","type_charge":"pix","webhook_url":"`+hook+`"}`))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "key-"+strings.NewReplacer("/", "-", ":", "-").Replace(hook))
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			var ch struct {
				UUID string `json:"charge_uuid"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&ch))
			return ch.UUID
		}
		reset, own := charge(base+"/_fakepay/reset"), charge(base+"/hook")
		resp, err := http.Post(base+"/_fakepay/a55/webhooks/deliver", "application/json", nil)
		require.NoError(t, err)
		resp.Body.Close()
		state := func(chargeUUID string) string {
			resp, err := http.Get(base + "/_fakepay/a55/webhooks?charge_uuid=" + chargeUUID)
			require.NoError(t, err)
			defer resp.Body.Close()
			var list struct {
				Deliveries []struct {
					State string `json:"state"`
				} `json:"deliveries"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
			require.Len(t, list.Deliveries, 1, chargeUUID)
			return list.Deliveries[0].State
		}
		assert.Equal(t, "blocked", state(reset))
		if allowSelf {
			assert.Equal(t, "failed", state(own), "delivered, and answered 404")
		} else {
			assert.Equal(t, "blocked", state(own))
		}
		lr, err := http.Get(base + "/_fakepay/ledger")
		require.NoError(t, err)
		var ledger struct {
			Operations []map[string]any `json:"operations"`
		}
		require.NoError(t, json.NewDecoder(lr.Body).Decode(&ledger))
		lr.Body.Close()
		assert.Len(t, ledger.Operations, 2, "the ledger survives")
	}
}
