package soak

import (
	"os"
	"strconv"
	"testing"

	"github.com/orchestra-tui/orchestra-tui/host"
)

// TestMain has every engine and session host the soak starts (the
// engines it kills and restarts, and those `run --headless` spawns) end
// with this test binary (host.AnchorEnv), even when it dies of its
// timeout before a cleanup runs.
func TestMain(m *testing.M) {
	os.Setenv(host.AnchorEnv, strconv.Itoa(os.Getpid()))
	os.Exit(m.Run())
}
