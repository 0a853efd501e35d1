package payonce

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/payonce/payonce/internal/corekit"
)

// Signer authenticates one attempt. The client calls Sign for every attempt,
// the first and each retry, after the body and the Idempotency-Key are
// fixed, so each attempt carries a fresh nonce, timestamp and signature
// while the key and the body bytes stay identical. body is the exact bytes
// that will be sent (nil for none).
//
// A Signer that can mend the cause of its own rejection (a token to
// refresh after a 401, a clock to correct after a timestamp refusal) also
// has a method Recover(ctx, header, err *APIError) bool: when an answer is
// an error, the client asks it once per operation and, on true, repeats the
// attempt with the same key and body and a new signature.
type Signer interface {
	Sign(req *http.Request, body []byte) error
}

// ErrSignerTemporary marks a Signer error that may pass and happened
// before anything was sent (an OAuth2 token endpoint answering 5xx or
// timing out, say). A Signer wraps it (fmt.Errorf("%w: ...",
// payonce.ErrSignerTemporary)) and the client retries the attempt within
// the operation's retry policy, with the same key and body: the failed
// signing is not counted as an attempt sent, but it uses up a place in the
// retry schedule, so a signer that keeps failing cannot loop forever. Any
// other Signer error ends the operation at once.
var ErrSignerTemporary = newKind("signer_temporary", "signer temporarily unable to sign")

// recoverer is a Signer that can mend the cause of its own rejection: an
// OAuth2 authorizer refreshes its token after a 401, the HMAC signer learns
// the server's clock after openapi_timestamp_expired. When an answer is an
// error, the client asks Recover once per operation; on true the attempt is
// repeated with the same key and body and a new signature (see Signer).
//
// The ctx given to Recover holds the signed request the server rejected
// (corekit.RejectedRequest), so that a Signer can tell a rejection of its
// current credentials from a late one of credentials it has already
// replaced.
type recoverer interface {
	Recover(ctx context.Context, header http.Header, err *APIError) bool
}

// recoverSigner asks s, when it is a Recoverer, to mend the rejection err
// of the answer resp; Recover's ctx holds resp's request.
func recoverSigner(ctx context.Context, s Signer, resp *http.Response, err *APIError) bool {
	r, ok := s.(recoverer)
	if !ok {
		return false
	}
	if resp.Request != nil {
		ctx = corekit.WithRejectedRequest(ctx, resp.Request)
	}
	return r.Recover(ctx, resp.Header, err)
}

// sign signs the attempt afresh. A temporary failure of the signer is
// retried like a transport failure (nothing was sent: a place in the
// schedule, not an attempt); any other stops the loop.
func (op *operation) sign(r *http.Request) error {
	if op.c.signer == nil {
		return nil
	}
	if err := op.c.signer.Sign(r, op.body); err != nil {
		if op.jr != nil {
			op.jr.signFailed = true // nothing of this attempt left (storePending)
		}
		if errors.Is(err, ErrSignerTemporary) {
			return fmt.Errorf("sign: %w", err)
		}
		return &stopError{err: fmt.Errorf("sign: %w", err)}
	}
	return nil
}
