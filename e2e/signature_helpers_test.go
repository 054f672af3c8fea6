package e2e

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/sign"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// withFleetKeyDir runs the tests with a configuration directory of their
// own, inherited by every engine they start, so the fleet key those
// engines share (sign.DefaultPath) is this test binary's, never the user's.
func withFleetKeyDir(m *testing.M) int {
	dir, err := os.MkdirTemp("", "e2e-config-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	os.Setenv("XDG_CONFIG_HOME", dir)
	return m.Run()
}

// signedTask signs tk with the fleet key the tests' engines use, as an
// engine's add would: for tests that put a task in the store directly.
func signedTask(t testing.TB, tk task.Task) task.Task {
	t.Helper()
	k, _, err := sign.Load("")
	require.NoError(t, err)
	tk.Signature = k.Sign(tk)
	return tk
}
