package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every flag value fakepay cannot run with is refused at parse time with a
// message naming the flag, before anything listens.
func TestInvalidFlagsAreRefused(t *testing.T) {
	for _, args := range [][]string{
		{"-latency", "-1s"},
		{"-a55-token-lifetime", "0s"},
		{"-a55-token-lifetime", "-1m"},
		{"-fault-rate", "1.5"},
		{"-fault-rate", "-0.1"},
		{"-fault-rate", "NaN"},
		{"-balance", "abc"},
		{"-balance", "-5.00"},
		{"-max-operations", "-1"},
		{"-shutdown-timeout", "-1s"},
		{"-read-timeout", "0s"},
		{"-a55-client-id", ""},
		{"-coinepay-secret", ""},
		{"-a55-webhook-secret", ""},
	} {
		_, err := parseFlags(args, io.Discard)
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), args[0], args)
	}
	_, err := parseFlags([]string{"-latency", "0s", "-fault-rate", "1", "-a55-rate-limit", "-1", "-balance", "0.00"}, io.Discard)
	assert.NoError(t, err)
}
