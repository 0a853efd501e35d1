package pgnotice

import (
	"fmt"
	"io"
	"os"
	"testing"
)

// EnvURL names the variable that points the tests at a PostgreSQL database.
const EnvURL = "PAYONCE_POSTGRES_URL"

// ExampleURL is the database the project's own set-up uses.
const ExampleURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Main runs the tests of pkg and exits with their code, and, when EnvURL is
// not set, first writes one line saying that its PostgreSQL tests were
// skipped to stderr and to the controlling terminal (/dev/tty), where a
// non-verbose go test shows it. Test processes the tests start (which
// inherit the environment) say nothing. Call it from TestMain:
// pgnotice.Main(m, "journal").
func Main(m *testing.M, pkg string) {
	if os.Getenv(envShown) == "" {
		out := []io.Writer{os.Stderr}
		tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
		if err == nil {
			out = append(out, tty)
		}
		announce(pkg, os.Getenv(EnvURL), out...)
		if err == nil {
			_ = tty.Close()
		}
		_ = os.Setenv(envShown, "1")
	}
	os.Exit(m.Run())
}

// envShown is set once the notice was given, for the processes a test
// starts.
const envShown = "PAYONCE_PGNOTICE_SHOWN"

// announce writes the notice to every writer when url is empty.
func announce(pkg, url string, out ...io.Writer) {
	if url != "" {
		return
	}
	for _, w := range out {
		fmt.Fprintf(w, "payonce %s: PostgreSQL tests skipped (%s is not set); run them with %s=%s go test ./%s/\n",
			pkg, EnvURL, EnvURL, ExampleURL, pkg)
	}
}
