package host

import (
	"context"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A host whose anchor process ends stops its agent and goes, so a test
// binary that dies of its timeout leaves no host or agent behind.
func TestAHostEndsWithItsAnchor(t *testing.T) {
	anchor := exec.Command("sleep", "600")
	require.NoError(t, anchor.Start())
	t.Cleanup(func() { _ = anchor.Process.Kill(); _ = anchor.Wait() })
	// Not parallel: the launcher passes this process's environment on.
	t.Setenv(AnchorEnv, strconv.Itoa(anchor.Process.Pid))
	cl, _ := launchHost(t, catSpec())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, cl.WaitReady(ctx))
	hostPid, agentPid := cl.HostPid(), cl.Pid()

	require.NoError(t, anchor.Process.Kill())
	_ = anchor.Wait()
	waitGone(t, hostPid)
	waitGone(t, agentPid)
}
