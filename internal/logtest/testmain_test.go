package logtest

import (
	"testing"

	"github.com/payonce/payonce/internal/raceexit"
)

func TestMain(m *testing.M) { raceexit.Main(m) }
