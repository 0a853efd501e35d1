package payonce

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/payonce/payonce/internal/corekit"
)

// decode decodes the final 2xx answer into out with the client's codec (a
// 304 keeps the caller's copy). A codec's *APIError (a 2xx envelope
// reporting a failure) is the operation's error; any other decoding
// failure is ErrMalformedResponse.
func (op *operation) decode(resp *http.Response, out any) error {
	if resp.StatusCode == http.StatusNotModified {
		return nil // the caller's copy is current
	}
	if derr := op.c.codec.DecodeSuccess(resp.StatusCode, resp.Header, op.respBody, out); derr != nil {
		var apiErr *APIError
		if errors.As(derr, &apiErr) {
			op.fill(apiErr, resp)
			return apiErr
		}
		return op.fail(ErrMalformedResponse, serverCause(derr))
	}
	op.debug("payonce operation done", slog.Int("status", resp.StatusCode), slog.Bool("replayed", strings.EqualFold(resp.Header.Get(corekit.HeaderReplay), "true")))
	return nil
}
