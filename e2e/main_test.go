package e2e

import (
	"flag"
	"os"
	"strconv"
	"testing"

	"github.com/orchestra-tui/orchestra-tui/host"
)

// parallelTests is how many of this package's parallel tests run at once
// when -parallel is not given. go test's default is GOMAXPROCS, two on the
// CI machine, and most of these tests spend their time waiting on an agent,
// a lease or a console: with two at a time the package's tail was two
// tests waiting on wall-clock resets while the machine sat idle.
const parallelTests = 4

// TestMain has every engine and session host these tests start end with
// this test binary (host.AnchorEnv), even when it dies of its timeout
// before a cleanup runs: a console's engine, started through tmux, gets
// the variable through the environment like everything else.
func TestMain(m *testing.M) {
	os.Setenv(host.AnchorEnv, strconv.Itoa(os.Getpid()))
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(parallelTests))
	}
	code := withFleetKeyDir(m)
	removeSharedBinary()
	os.Exit(code)
}
