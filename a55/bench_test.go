package a55_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-retryablehttp"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
	"github.com/payonce/payonce/a55/a55test"
)

// BenchmarkChargeCreate compares one successful charge on the fake A55
// server done three ways: through the SDK (key, validation, retry loop,
// bearer token, decode into typed structs), with a bare net/http client,
// and with a raw go-retryablehttp client. Each does the same work a
// merchant must do at the least: a new UUID key, the JSON body, the POST,
// the JSON answer. docs/chaos.md reports the ratios.
func BenchmarkChargeCreate(b *testing.B) {
	srv := a55test.NewServer(a55test.WithRateLimit(-1, 0))
	defer srv.Close()
	token := srv.IssueToken()
	hc := payonce.DefaultHTTPClient()
	amount, _ := payonce.ParseAmount("100.00")
	newReq := func() *a55.ChargeCreateRequest {
		return &a55.ChargeCreateRequest{
			Amount: amount, Currency: payonce.BRL, TypeCharge: a55.TypeCreditCard,
			Card: &payonce.Card{Number: a55test.CardConfirms, HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2099", CVV: "123"},
		}
	}
	url := srv.URL + a55.PathCharges
	check := func(b *testing.B, resp *http.Response, err error) {
		if err != nil {
			b.Fatal(err)
		}
		var ch a55.Charge
		err = json.NewDecoder(resp.Body).Decode(&ch)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || ch.UUID == "" {
			b.Fatalf("bad answer %d %v", resp.StatusCode, err)
		}
	}

	b.Run("bare-net-http", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			key, _ := payonce.NewKey(time.Now(), uuid.NewString())
			body, _ := json.Marshal(newReq())
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set(payonce.HeaderIdempotencyKey, key.ID())
			resp, err := hc.Do(req)
			check(b, resp, err)
		}
	})
	b.Run("raw-retryablehttp", func(b *testing.B) {
		rc := retryablehttp.NewClient()
		rc.HTTPClient, rc.Logger = hc, nil
		b.ReportAllocs()
		for b.Loop() {
			key, _ := payonce.NewKey(time.Now(), uuid.NewString())
			body, _ := json.Marshal(newReq())
			req, _ := retryablehttp.NewRequestWithContext(context.Background(), http.MethodPost, url, body)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set(payonce.HeaderIdempotencyKey, key.ID())
			resp, err := rc.Do(req)
			check(b, resp, err)
		}
	})
	b.Run("sdk", func(b *testing.B) {
		c, err := a55.NewClient(a55.AccessToken(token), payonce.WithBaseURL(srv.URL), payonce.WithHTTPClient(hc))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			ch, err := c.Charges.Create(context.Background(), newReq())
			if err != nil || ch.UUID == "" {
				b.Fatal(err)
			}
		}
	})
}
