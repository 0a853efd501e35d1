// Package a55 is the typed client for A55's wallet and charge API
// (https://docs.a55.tech), built on the payonce core: every POST is one
// business operation with one Idempotency-Key, sent unchanged on every
// retry, so a charge runs exactly once however often the network makes the
// client try again. A merchant calls NewClient, WithAccount and the
// services, Charges and Wallets:
//
//	client, err := a55.NewClient(a55.ClientCredentials(id, secret), a55.WithEnvironment(a55.Production))
//	shop := client.WithAccount(a55.Account{MerchantID: merchantID, WalletUUID: walletUUID})
//	ch, err := shop.Charges.Create(ctx, &a55.ChargeCreateRequest{...}, payonce.WithReference("order-42/attempt-1"))
//
// A client is built for one environment (Sandbox, the default,
// Production or ProductionCoreManager: WithEnvironment) and may act for
// one merchant and wallet (WithAccount). It authenticates with OAuth2
// client credentials (one shared token fetch, cached, refreshed min(1
// minute, lifetime/2) before it expires and once more when an answer is
// 401, repeating the attempt with the same key; token requests follow no
// redirect) or with a fixed access token.
//
// Charges.Create sends the create-charge reference's flat body for every
// payment method (card, PIX, boleto, Apple and Google Pay), every
// required field checked before any byte is sent; amounts are JSON
// numbers in the currency's decimals, never rounded (SplitTotal,
// ChargeCreateRequest.Total). docs/a55.md lists the fields and the
// decisions taken where A55's pages disagree.
//
// Services follow the style of well-known Go API clients: client.Wallets
// and client.Charges, ctx first, one method per endpoint. Every result
// carries a Meta field (ResponseMeta) with the key used, whether the answer
// was a replay, the attempts, the request ID and the X-RateLimit-* values.
//
// Every error is a *payonce.APIError (or wraps one): branch with errors.Is
// on the payonce sentinels and resume a failed operation with
// payonce.WithKey(payonce.KeyOf(err)). A declined or failed charge is a *ChargeError,
// which still gives the charge.
//
// The mapping of A55's answers (docs/a55.md, "Codes", has every code):
//
//	409, general shape or no body        payonce.ErrIdempotencyConflict (never retried)
//	409, charge-level shape              ErrInvalidState (already paid, canceled, settled)
//	charge in status error or declined   *ChargeError: ErrCardDeclined (codes 05, 57, 77, 78,
//	(any case)                           CARD_DECLINED...) or ErrChargeFailed (70, 99...)
//	3DS_REQUIRED                         ErrThreeDSRequired: an action (ChallengeURL), final
//	3DS_UNAVAILABLE, PROCESSING_ERROR    retried under the same key (3DS_UNAVAILABLE no
//	                                     sooner than 60 s later), whatever the status
//	TIMEOUT, DUPLICATE_REQUEST           never retried: the charge the answer names is read;
//	                                     in doubt until then (payonce.ErrOutcomeUnknown)
//	401                                  token refreshed once, attempt repeated; then payonce.ErrUnauthorized
//	403, 404, 400/422                    payonce.ErrForbidden, payonce.ErrNotFound, payonce.ErrInvalidRequest
//	429                                  waits Retry-After (capped by the policy) and retries
//	500, 502, 503, 504, lost answers     retried with the same key
//
// Charges.Get, Charges.Fetch, Charges.List and Charges.All read charges
// back: a charge whose answer was lost is settled by reading it
// (Charges.SettleCreate, docs/a55.md), never by keeping the card and CVV
// to send them again.
//
// Webhooks are verified with WebhookVerifier (HMAC-SHA256 over timestamp,
// "." and the raw body, five minutes of tolerance). They arrive at least
// once, out of order and with no event ID: WebhookReceiver hands each
// event (identified by WebhookEvent.Key, ordered by ChargeState) to your
// handler once through a payonce.Inbox; docs/a55.md, "Webhooks", says
// what identifies an event and why.
//
// The key is the journal's (payonce.WithReference), else payonce.WithKey,
// else a new UUID v4. A55 remembers a key for 24 hours;
// the client refuses to send an attempt once the key is older than that
// window minus the retry policy's safety margin.
package a55
