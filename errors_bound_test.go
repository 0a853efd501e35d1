package payonce

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A hostile server's error text is bounded: a 1 MiB message, code,
// request ID or list of details does not make every Error() call (and
// every log line) redact a megabyte again, and the cut never leaves part
// of a card number or token in clear.
const textCut = " [cut]" // what redact.Cut ends a cut text with

func TestServerErrorTextBounded(t *testing.T) {
	big := strings.Repeat("card 4111 1111 1111 1111 token tok_hostile_42 ", 700<<10/46)
	details := make([]ErrorDetail, 5000)
	for i := range details {
		details[i] = ErrorDetail{Field: "f", Reason: big[:1000], Code: "c"}
	}
	body, err := json.Marshal(map[string]any{"request_id": big[:50000], "error": map[string]any{
		"code": big[:50000], "message": big, "details": details[:150]}})
	require.NoError(t, err)
	require.Less(t, len(body), maxErrorBody, "the whole body is read")

	rec := &recorder{statuses: []int{400}, body: string(body)}
	c := setup(t, rec)
	_, err = c.Do(t.Context(), postReq(), nil)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	assert.LessOrEqual(t, len(ae.Message), maxServerText+len(textCut))
	assert.LessOrEqual(t, len(ae.Code), maxServerCode+len(textCut))
	assert.LessOrEqual(t, len(ae.RequestID), maxServerCode+len(textCut))
	assert.LessOrEqual(t, len(ae.Details), maxServerDetails)
	assert.LessOrEqual(t, len(err.Error()), 2*maxServerText+2*maxServerCode+1000)
	assert.True(t, strings.HasSuffix(ae.Message, textCut), "the cut is said")
	for _, s := range []string{err.Error(), ae.Message, ae.Code, ae.RequestID, ae.Details[0].Reason} {
		assert.NotContains(t, s, "tok_hostile")
		assert.NotContains(t, s, "4111 ")
		assert.NotContains(t, s, "tok_")
	}
}
