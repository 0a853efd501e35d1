package coinepay_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/testsupport/keytest"
)

// TestMessageKeysMapToSentinels sends every message_key of the Coinepay
// idempotency document and of the project's signing scheme (docs/signing.md)
// through the client and checks the sentinel, the raw code and the
// untranslated message.
func TestMessageKeysMapToSentinels(t *testing.T) {
	cases := []struct {
		status int
		key    string
		msg    string
		kind   error
	}{
		{400, "openapi_idempotency_key_required", "缺少 Idempotency-Key 请求头", payonce.ErrKeyRequired},
		{400, "openapi_idempotency_key_too_long", "Idempotency-Key 过长", payonce.ErrKeyTooLong},
		{400, "openapi_idempotency_key_invalid_chars", "Idempotency-Key 含非法字符", payonce.ErrKeyInvalidChars},
		{409, "openapi_idempotency_key_conflict", "Idempotency-Key 冲突", payonce.ErrIdempotencyConflict},
		{400, "insufficient_balance", "余额不足", coinepay.ErrInsufficientBalance},
		{401, "openapi_signature_required", "缺少签名", coinepay.ErrSignatureInvalid},
		{401, "openapi_api_key_invalid", "API Key 无效", payonce.ErrUnauthorized},
		{401, "openapi_timestamp_expired", "时间戳过期", coinepay.ErrTimestampExpired},
		{401, "openapi_nonce_replayed", "Nonce 重复", coinepay.ErrNonceReplayed},
		{401, "openapi_signature_invalid", "签名无效", coinepay.ErrSignatureInvalid},
		// Unknown keys keep their raw code; the status picks the kind.
		{400, "openapi_card_frozen", "卡片已冻结", payonce.ErrInvalidRequest},
		{404, "openapi_card_not_found", "卡片不存在", payonce.ErrNotFound},
		{409, "openapi_card_busy", "处理中", payonce.ErrIdempotencyConflict},
	}
	for _, tc := range cases {
		t.Run(tc.key, func(t *testing.T) {
			c, mux, seen := setup(t)
			mux.HandleFunc("POST "+coinepay.PathCardApply, func(w http.ResponseWriter, _ *http.Request) {
				writeEnvelope(w, tc.status, tc.key, tc.msg, nil)
			})
			_, err := c.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h", PackageID: "p"},
				payonce.WithKey(keytest.Now(t, "job-1")))
			require.ErrorIs(t, err, tc.kind)
			var ae *payonce.APIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tc.key, ae.Code)
			assert.Equal(t, tc.msg, ae.Message, "message kept in its language")
			assert.Equal(t, tc.status, ae.StatusCode)
			assert.Equal(t, "job-1", ae.Key.String())
			assert.Equal(t, "job-1", payonce.KeyOf(err).String())
			assert.Contains(t, err.Error(), tc.msg)
			assert.NotContains(t, err.Error(), testSecret)
			assert.Equal(t, "cards.apply", ae.Operation)
			n := len(seen())
			if tc.key == "openapi_timestamp_expired" {
				assert.Equal(t, 2, n, "one repeat after the clock recovery")
			} else {
				assert.Equal(t, 1, n, "a 4xx answer is final")
			}
		})
	}
}

func TestDecodeSuccessEnvelopeWithErrorCode(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("POST "+coinepay.PathCardApply, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprint(w, `{"code":"400","message":"余额不足","message_key":"insufficient_balance","data":null}`)
	})
	_, err := c.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h", PackageID: "p"}, payonce.WithKey(keytest.Now(t, "k-200")))
	require.ErrorIs(t, err, coinepay.ErrInsufficientBalance)
	var ae *payonce.APIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "k-200", ae.Key.String())
	assert.Equal(t, "insufficient_balance", ae.Code)
	assert.Equal(t, "余额不足", ae.Message)
}

func TestDecodeMalformedAnswers(t *testing.T) {
	c, mux, _ := setup(t)
	mux.HandleFunc("POST "+coinepay.PathCardApply, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprint(w, `<html>oops</html>`)
	})
	mux.HandleFunc("GET "+coinepay.PathCardInfo, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = fmt.Fprint(w, `<html>bad gateway</html>`)
	})
	_, err := c.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h", PackageID: "p"})
	require.ErrorIs(t, err, payonce.ErrMalformedResponse)
	assert.NotEmpty(t, payonce.KeyOf(err).String())

	_, err = c.Cards.Info(context.Background(), "c1")
	require.ErrorIs(t, err, payonce.ErrRetriesExhausted)
	require.ErrorIs(t, err, payonce.ErrServer)
}

func TestCodecDirect(t *testing.T) {
	var cd coinepay.Codec
	var out struct {
		CardID string `json:"card_id"`
	}
	require.NoError(t, cd.DecodeSuccess(200, nil, []byte(`{"code":200,"message":"成功","message_key":"success","data":{"card_id":"x"}}`), &out))
	assert.Equal(t, "x", out.CardID)
	require.NoError(t, cd.DecodeSuccess(200, nil, []byte(`{"code":200,"data":null}`), &out))
	require.NoError(t, cd.DecodeSuccess(204, nil, nil, nil))
	require.Error(t, cd.DecodeSuccess(200, nil, nil, &out))
	require.Error(t, cd.DecodeSuccess(200, nil, []byte(`{"code":"abc"}`), &out))

	err := cd.DecodeSuccess(200, nil, []byte(`{"code":409,"message":"冲突","message_key":"openapi_idempotency_key_conflict"}`), &out)
	var ae *payonce.APIError
	require.True(t, errors.As(err, &ae))
	assert.ErrorIs(t, err, payonce.ErrIdempotencyConflict)

	var e payonce.APIError
	cd.DecodeError(500, nil, []byte(`{"code":500,"message":"内部错误","message_key":"openapi_internal_error","request_id":"r1"}`), &e)
	assert.Equal(t, "openapi_internal_error", e.Code)
	assert.Equal(t, "内部错误", e.Message)
	assert.Equal(t, "r1", e.RequestID)
	e = payonce.APIError{}
	cd.DecodeError(502, nil, []byte(`not json`), &e)
	assert.Empty(t, e.Code)
}

// The Coinepay table of failures final for a key: refusals of the body or
// key only; a balance to top up, a conflict, an answer not kept, refused
// signatures, 429 and 5xx leave the entry pending.
func TestFinalForKey(t *testing.T) {
	final := []error{payonce.ErrInvalidRequest, payonce.ErrNotFound, payonce.ErrKeyRequired, payonce.ErrKeyTooLong, payonce.ErrKeyInvalidChars}
	open := []error{coinepay.ErrInsufficientBalance, payonce.ErrIdempotencyConflict, coinepay.ErrSignatureInvalid, coinepay.ErrTimestampExpired,
		coinepay.ErrNonceReplayed, payonce.ErrUnauthorized, payonce.ErrForbidden, payonce.ErrRateLimited, payonce.ErrServer,
		payonce.ErrMalformedResponse, payonce.NewKind("card_declined", "card declined"), payonce.NewKind("invalid_state", "invalid state for this operation")} // another provider's
	c := coinepay.ProviderForTest()
	for _, k := range final {
		assert.True(t, c.FinalForKey(&payonce.APIError{Kind: k, StatusCode: 400}), k.Error())
	}
	for _, k := range open {
		assert.False(t, c.FinalForKey(&payonce.APIError{Kind: k, StatusCode: 400}), k.Error())
	}
	assert.False(t, c.FinalForKey(nil))
}

// A 2xx envelope whose data names no card (data null, {}, or missing) is
// no card issued nor recharged: a malformed answer carrying the key, never
// a success with an empty Card.
func TestEnvelopeWithoutCardIsMalformed(t *testing.T) {
	for _, data := range []any{nil, map[string]any{}, map[string]any{"status": "active"}} {
		c, mux, _ := setup(t)
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			writeEnvelope(w, http.StatusOK, "ok", "成功", data)
		})
		res, err := c.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "h1", PackageID: "p1"})
		assert.Nil(t, res, "%v", data)
		require.ErrorIs(t, err, payonce.ErrMalformedResponse, "%v", data)
		assert.NotEmpty(t, payonce.KeyOf(err).String())
		rc, err := c.Cards.Recharge(context.Background(), &coinepay.RechargeRequest{CardID: "card_1", Amount: mustAmount(t, "12.50")})
		assert.Nil(t, rc, "%v", data)
		require.ErrorIs(t, err, payonce.ErrMalformedResponse, "%v", data)
		assert.NotEmpty(t, payonce.KeyOf(err).String())
	}
}

// FuzzEnvelopeDecoding feeds arbitrary answers to the envelope codec: it
// must never panic, and an error answer always gets a kind.
func FuzzEnvelopeDecoding(f *testing.F) {
	f.Add(200, []byte(`{"code":200,"message":"ok","message_key":"success","data":{"card_id":"c1","balance":"1.00"}}`))
	f.Add(409, []byte(`{"code":409,"message":"Idempotency-Key 冲突","message_key":"openapi_idempotency_key_conflict","data":null}`))
	f.Add(200, []byte(`{"code":"400","message_key":"insufficient_balance","data":null}`))
	f.Add(500, []byte(`<html>`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		var card coinepay.Card
		_ = coinepay.Codec{}.DecodeSuccess(status, http.Header{}, body, &card)
		e := &payonce.APIError{}
		coinepay.Codec{}.DecodeError(status, http.Header{}, body, e)
		_ = e.Error()
	})
}
