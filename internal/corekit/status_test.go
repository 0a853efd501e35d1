package corekit

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

type status string

func TestStatusIsIgnoresCaseAndSpaces(t *testing.T) {
	for _, got := range []status{"error", "ERROR", "Error", " error\n", "eRRoR"} {
		assert.True(t, StatusIs(got, "error"), got)
		assert.Equal(t, "error", StatusKey(got))
	}
	for _, got := range []status{"errors", "", "err or", "refund_error"} {
		assert.False(t, StatusIs(got, "error"), got)
	}
}
