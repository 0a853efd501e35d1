package a55_test

import (
	"testing"

	"github.com/payonce/payonce/a55"
	"github.com/stretchr/testify/assert"
)

func TestCodecNamesTheChargeOfACreate(t *testing.T) {
	for body, want := range map[string]string{
		`{"charge_uuid":"c-1","status":"confirmed"}`: "c-1",
		`{"charge_uuid":"c-2","status":"error"}`:     "c-2",
		`{"charge_uuid":7}`:                          "",
		`{"status":"confirmed"}`:                     "",
		`[{"charge_uuid":"c-3"}]`:                    "",
		`not json`:                                   "",
	} {
		assert.Equal(t, want, a55.Codec{}.ResourceID("charges.create", []byte(body)), body)
	}
	assert.Empty(t, a55.Codec{}.ResourceID("charges.capture", []byte(`{"charge_uuid":"c-1"}`)), "a capture makes no charge")
}
