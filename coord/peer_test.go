package coord

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// peerSocketEnv names the socket the helper process dials.
const peerSocketEnv = "ORCHESTRA_TEST_PEER_SOCKET"

// TestPeerHelper is the refused peer: run as another user, it sends a
// command and prints the error it gets.
func TestPeerHelper(t *testing.T) {
	path := os.Getenv(peerSocketEnv)
	if path == "" {
		t.Skip("helper process only")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Send(ctx, path, Command{Kind: CmdCorrect, TaskID: "T", Text: "x"})
	fmt.Printf("SEND-ERROR: %v\n", err)
}

// A peer the socket's 0600 mode refuses is told a console runs and that it
// is not theirs, never "no console is running".
func TestARefusedPeerIsToldWhy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "control.sock")
	ln, err := net.Listen("unix", path)
	require.NoError(t, err)
	defer ln.Close()
	require.NoError(t, os.Chmod(path, 0o600))

	var out []byte
	if os.Geteuid() == 0 {
		// Root passes every mode check: dial as nobody, from a copy of this
		// binary that nobody may run.
		self, err := os.Executable()
		require.NoError(t, err)
		bin := filepath.Join(dir, "peer.test")
		// A hard link, not a copy where it can be: a copy written here
		// can be held open for writing by a process another parallel
		// test forks meanwhile, and its exec then fails with "text file
		// busy".
		if os.Link(self, bin) != nil {
			data, err := os.ReadFile(self)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(bin, data, 0o755))
		}
		require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755)) // the test's own temp root
		require.NoError(t, os.Chmod(dir, 0o755))
		cmd := exec.Command(bin, "-test.run=^TestPeerHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), peerSocketEnv+"="+path, "HOME=/")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err = cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	} else {
		require.NoError(t, os.Chmod(path, 0o000))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := Send(ctx, path, Command{Kind: CmdCorrect, TaskID: "T", Text: "x"})
		out = []byte(fmt.Sprintf("SEND-ERROR: %v\n", err))
	}
	require.Contains(t, string(out), "SEND-ERROR: a console is running on this repository but its control socket")
	require.Contains(t, string(out), "permission denied")
	require.NotContains(t, string(out), ErrNoConsole.Error())
}
