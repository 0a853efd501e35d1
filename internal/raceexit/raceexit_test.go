package raceexit

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { Main(m) }

func TestSkipFinalizer(t *testing.T) {
	for _, c := range []struct {
		race          bool
		cover, gorace string
		want          bool
	}{
		{true, "", "", true},
		{true, "", "halt_on_error=1", true},
		{false, "", "", false},
		{true, "set", "", false},
		{true, "", "atexit_sleep_ms=50", false},
		{true, "", "halt_on_error=1 atexit_sleep_ms=0", false},
	} {
		assert.Equal(t, c.want, skipFinalizer(c.race, c.cover, c.gorace), "%+v", c)
	}
}

// helperEnv names the case a re-executed test binary plays.
const helperEnv = "RACEEXIT_HELPER"

// TestHelperCase fails, or races, when its process was started to.
func TestHelperCase(t *testing.T) {
	switch os.Getenv(helperEnv) {
	case "fail":
		t.Error("asked to fail")
	case "race":
		var x int
		var wg sync.WaitGroup
		wg.Go(func() { x = 1 })
		x = 2
		wg.Wait()
		_ = x
	case "late":
		// Two goroutines the test leaves running race 100 ms after it,
		// and after the last test: go test -race, through os.Exit and
		// the race runtime's 1 s pause, reports the race and fails.
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() { time.Sleep(100 * time.Millisecond); lateRacy = i })
		}
		_ = &wg
	case "linger":
		// A goroutine that never ends, and never races.
		go func() { select {} }()
	}
}

var lateRacy int

// runHelper runs this test binary's TestHelperCase as helper case c and
// returns its exit code and output.
func runHelper(t *testing.T, c string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCase$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+c)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	require.NoError(t, err, string(out))
	return 0, string(out)
}

func TestMainEndsWithTheTestsExitCode(t *testing.T) {
	code, out := runHelper(t, "pass")
	assert.Equal(t, 0, code, out)
	code, out = runHelper(t, "fail")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "asked to fail")
}

// Every package's tests end through Main (pgnotice.Main calls it), so
// that no test binary of the module pauses at exit.
func TestEveryTestBinaryEndsThroughMain(t *testing.T) {
	root := filepath.Join("..", "..")
	dirs := map[string][]string{}
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || fileExists(filepath.Join(path, "go.mod"))) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], path)
		}
		return nil
	}))
	require.NotEmpty(t, dirs)
	for dir, files := range dirs {
		assert.True(t, endsThroughMain(t, files), "%s: add func TestMain(m *testing.M) { raceexit.Main(m) }", dir)
	}
}

// endsThroughMain reports whether one of files declares a TestMain that
// calls raceexit.Main, or pgnotice.Main, which does.
func endsThroughMain(t *testing.T, files []string) bool {
	t.Helper()
	fset := token.NewFileSet()
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Name.Name != "TestMain" || fn.Body == nil {
				continue
			}
			found := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					switch fun := call.Fun.(type) {
					case *ast.SelectorExpr:
						if x, ok := fun.X.(*ast.Ident); ok && fun.Sel.Name == "Main" && (x.Name == "raceexit" || x.Name == "pgnotice") {
							found = true
						}
					case *ast.Ident:
						found = found || fun.Name == "Main" // this package's own
					}
				}
				return !found
			})
			return found
		}
	}
	return false
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// A race fails the run: one found during a test fails that test, and
// one found after the last test, in goroutines a test left running, fails
// it as a plain TestMain (os.Exit(m.Run())) under go test -race does: the
// race runtime's pause at exit is there to catch it, and exits 66. Main
// gives those goroutines the same time, and fails the run the same way.
func TestMainStillFailsARace(t *testing.T) {
	if !raceEnabled {
		t.Skip("needs -race")
	}
	for c, want := range map[string]struct {
		code int
		says string
	}{
		"race": {1, "race detected during execution of test"},
		"late": {66, "DATA RACE"},
	} {
		code, out := runHelper(t, c)
		assert.Equal(t, want.code, code, out)
		assert.Contains(t, out, "DATA RACE", c)
		assert.Contains(t, out, want.says, c)
	}
}

// A goroutine left running that never races holds the process for the
// race runtime's pause at most, and the tests' code stands.
func TestMainEndsDespiteAGoroutineThatNeverEnds(t *testing.T) {
	code, out := runHelper(t, "linger")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "PASS")
}

func TestAwaitGoroutinesReturnsOnceTheyHaveEnded(t *testing.T) {
	running := 5                                                            // goroutines ending one a look
	awaitGoroutines(func() int { running--; return running }, 2, time.Hour) // a wrong count would hold the test to its timeout
	assert.Equal(t, 2, running)

	looks := 0
	awaitGoroutines(func() int { looks++; return 3 }, 2, time.Millisecond) // returns when the time is up
	assert.Positive(t, looks)
}
