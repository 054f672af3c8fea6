package e2e

import (
	"os"
	"strconv"
	"testing"

	"github.com/orchestra-tui/orchestra-tui/host"
)

// TestMain has every engine and session host these tests start end with
// this test binary (host.AnchorEnv), even when it dies of its timeout
// before a cleanup runs: a console's engine, started through tmux, gets
// the variable through the environment like everything else.
func TestMain(m *testing.M) {
	os.Setenv(host.AnchorEnv, strconv.Itoa(os.Getpid()))
	setParallel()
	code := withFleetKeyDir(m)
	removeSharedBinary()
	os.Exit(code)
}
