package payonce_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/payonce/payonce"
)

// A charge whose first answer is lost is retried with the same key; the
// server (here a tiny stand-in) replays the first result.
func ExampleClient_Do() {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, `{"charge_uuid":"ch_1","status":"confirmed"}`)
	}))
	defer srv.Close()

	policy := payonce.DefaultRetryPolicy()
	policy.InitialInterval, policy.MaxInterval = time.Millisecond, 5*time.Millisecond
	client, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(policy),
		payonce.WithKeyRules(payonce.KeyRules{Provider: "a55", MinLen: 16, MaxLen: 128, Window: payonce.DefaultKeyWindow}))
	if err != nil {
		fmt.Println(err)
		return
	}
	var charge struct {
		ChargeUUID string `json:"charge_uuid"`
		Status     string `json:"status"`
	}
	meta, err := client.Do(context.Background(), &payonce.Request{
		Operation: "charges.create", Method: http.MethodPost, Path: "/api/v1/bank/wallet/charge/",
		Body: map[string]string{"amount": "100.00", "currency": "BRL"}, Keyed: true,
	}, &charge, payonce.WithIdempotencyKey("order-2026-000123"))
	fmt.Println(charge.ChargeUUID, charge.Status, meta.Key, meta.Attempts, err)
	// Output: ch_1 confirmed order-2026-000123 2 <nil>
}

// KeyOf and ResumeContext let a job queue resume a failed operation with
// the very same key, so it runs once however often the job is retried.
func ExampleResumeContext() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	policy := payonce.DefaultRetryPolicy()
	policy.MaxAttempts, policy.InitialInterval, policy.MaxInterval = 2, time.Millisecond, time.Millisecond
	client, _ := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithRetryPolicy(policy))

	req := &payonce.Request{Operation: "cards.apply", Method: http.MethodPost, Path: "/apply", Body: map[string]string{"package_id": "p1"}, Keyed: true}
	ctx := payonce.WithKey(context.Background(), payonce.TaskKey("openapi:apply", "task-42"))
	_, err := client.Do(ctx, req, nil)
	fmt.Println(errors.Is(err, payonce.ErrRetriesExhausted), payonce.IsTemporary(err), payonce.KeyOf(err))

	// Later, maybe in another process: resume with the stored key.
	_, err = client.Do(payonce.ResumeContext(context.Background(), err), req, nil)
	fmt.Println(payonce.KeyOf(err))
	// Output:
	// true true openapi:apply:task-42
	// openapi:apply:task-42
}

// Cards print masked; their JSON carries every field.
func ExampleCard() {
	card := payonce.Card{Number: "4111111111111111", HolderName: "TEST", ExpirationMonth: "12", ExpirationYear: "2030", CVV: "123"}
	fmt.Println(card)
	fmt.Printf("%+v\n", card)
	fmt.Println(card.Validate(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)))
	// Output:
	// card ************1111 exp 12/2030
	// {Number:************1111 HolderName:TEST ExpirationMonth:12 ExpirationYear:2030 CVV:***}
	// <nil>
}

func ExampleParseAmount() {
	a, err := payonce.ParseAmount("100.5")
	fmt.Println(a, a.Minor(), err)
	_, err = payonce.ParseAmount("1.234")
	fmt.Println(errors.Is(err, payonce.ErrInvalidAmount))
	// Output:
	// 100.50 10050 <nil>
	// true
}
