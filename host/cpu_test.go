package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/session"
)

// The host measures its agent's tree and the engine reads it through the
// client: a child that keeps a core busy (printing nothing) shows as CPU
// time rising; once it is stopped, the total holds.
func TestHostReportsTheTreesCPUTime(t *testing.T) {
	t.Parallel()
	spec := session.Spec{Name: "busy", Argv: []string{"sh", "-c", `printf 'READY\n'; while [ ! -e stop ]; do :; done; printf 'built\n'; exec cat`},
		Env: []string{"PATH", "HOME"}, Delivery: "type", Submit: "\r", Ready: "READY",
		Quiet: session.Duration{Duration: 50 * time.Millisecond}}
	cl, root := launchHost(t, spec)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, cl.WaitReady(ctx))
	first, ok := cl.CPU()
	require.True(t, ok, "the host measures its agent's tree")
	require.Eventually(t, func() bool {
		d, ok := cl.CPU()
		return ok && d >= first+200*time.Millisecond
	}, time.Minute, 20*time.Millisecond, "the busy loop's CPU time never showed")
	require.NoError(t, os.WriteFile(filepath.Join(root, "stop"), nil, 0o600))
	waitScreen(t, cl, "built")
	after, ok := cl.CPU()
	require.True(t, ok)
	again, _ := cl.CPU()
	require.Less(t, again-after, 100*time.Millisecond, "a tree at rest uses (almost) nothing")
}
