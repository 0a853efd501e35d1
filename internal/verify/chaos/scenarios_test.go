package chaos

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTestCardNotExpired(t *testing.T) {
	year, err := strconv.Atoi(testCard().ExpirationYear)
	require.NoError(t, err)
	assert.Greater(t, year, time.Now().Year(), "the run's card must stay valid whatever the date")
}
