package payonce

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/payonce/payonce/internal/corekit"
)

// summary is the JSON of the request's Summary as the journal stores it:
// redacted like every text the journal holds, "" without one. A summary
// that is not a JSON object or is longer than 4096 bytes is refused.
func (op *operation) summary() (string, error) {
	if op.req.Summary == nil {
		return "", nil
	}
	b, err := json.Marshal(op.req.Summary)
	if err != nil {
		return "", fmt.Errorf("encode request summary: %w", err)
	}
	if !bytes.HasPrefix(b, []byte("{")) {
		return "", errors.New("request summary: not a JSON object")
	}
	b = op.c.redactor().JSON(b)
	if len(b) > corekit.MaxSummaryLen {
		return "", fmt.Errorf("request summary: %d bytes of JSON, more than %d", len(b), corekit.MaxSummaryLen)
	}
	return string(b), nil
}
