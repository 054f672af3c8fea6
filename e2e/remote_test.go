package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// sshServer is an OpenSSH server on 127.0.0.1 that lets in one key made
// for the test, and the ssh client configuration that reaches it.
type sshServer struct {
	config string // an ssh_config file for `ssh -F`
}

// startSSHD starts sshd on a free loopback port with a host key and a client
// key made for the test, and stops it when the test ends. It skips the test
// when sshd is not installed and this is not CI (.ci/run installs it).
func startSSHD(t *testing.T) sshServer {
	t.Helper()
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		sshd = "/usr/sbin/sshd"
	}
	if _, err := os.Stat(sshd); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("sshd is not installed; .ci/run installs openssh-server")
		}
		t.Skip("sshd is not installed (apt-get install openssh-server): the --remote test reaches the engine over a real ssh")
	}
	if os.Geteuid() == 0 {
		// sshd running as root insists on its privilege-separation
		// directory; a fresh container may not have it yet.
		require.NoError(t, os.MkdirAll("/run/sshd", 0o755))
	}
	dir := t.TempDir()
	for _, k := range []string{"host_key", "client_key"} {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, k)).CombinedOutput()
		require.NoError(t, err, "ssh-keygen: %s", out)
	}
	pub, err := os.ReadFile(filepath.Join(dir, "client_key.pub"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600))

	// A free port: listen, note it, close. sshd binds it a moment later.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())

	conf := fmt.Sprintf(`ListenAddress 127.0.0.1
Port %d
HostKey %s
AuthorizedKeysFile %s
PidFile %s
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
`, port, filepath.Join(dir, "host_key"), filepath.Join(dir, "authorized_keys"), filepath.Join(dir, "sshd.pid"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(conf), 0o600))
	// -D: stay in the foreground as this test's child, which dies with the
	// test binary (Pdeathsig), even when it dies of its timeout before the
	// cleanup runs; -e: log to stderr, kept for a failure message.
	cmd := exec.Command(sshd, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var log strings.Builder
	cmd.Stderr = &log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	client := fmt.Sprintf(`Host *
  Port %d
  IdentityFile %s
  IdentitiesOnly yes
  UserKnownHostsFile /dev/null
  StrictHostKeyChecking no
  LogLevel ERROR
`, port, filepath.Join(dir, "client_key"))
	s := sshServer{config: filepath.Join(dir, "ssh_config")}
	require.NoError(t, os.WriteFile(s.config, []byte(client), 0o600))

	// Wait until sshd answers a login, bounded: it has no readiness signal
	// but its port.
	var out []byte
	if !poll(30*time.Second, func() bool {
		out, err = exec.Command("ssh", "-F", s.config, "-o", "BatchMode=yes", "127.0.0.1", "true").CombinedOutput()
		return err == nil
	}) {
		t.Fatalf("sshd did not let the test key in: %v\n%s\nsshd: %s", err, out, log.String())
	}
	return s
}

// TestRemoteConsoleOverSSH attaches a console to a repository's engine
// through `orchestra-tui --remote HOST:REPO`, which runs `ssh HOST
// orchestra-tui attach --stdio`: the pane of the live session shows, a
// correction typed in the console reaches the agent exactly once, and q
// detaches with the agent still running.
func TestRemoteConsoleOverSSH(t *testing.T) {
	parallel(t)
	// The engine ssh starts has the login's environment, not the test's
	// temporary config directory: orchestra.toml names the fleet key both
	// sides sign and check with, as a fleet's machines share one file.
	key := filepath.Join(t.TempDir(), "fleet.key")
	f := newFixture(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhasePlan: {{Behave: agent.BehaveIgnoreFirst}},
	}}, fmt.Sprintf("[fleet]\nkey = %q\n", key))
	f.addTask(t, "Remote task", "plan,implement")
	srv := startSSHD(t)
	t.Cleanup(func() { _ = exec.Command(f.bin, "stop", "-C", f.root).Run() })

	// The console runs in another directory: everything it shows comes over
	// ssh from the engine the remote side started.
	cmdline := "cd / && " + shellQuote(f.bin) + " --remote " + shellQuote("127.0.0.1:"+f.root) +
		" --remote-bin " + shellQuote(f.bin) + `; echo "console exited with status $?"; exec sleep 3600`
	tm := startTerm(t, cmdline, "ORCHESTRA_SSH_COMMAND=ssh -F "+srv.config, "COLORTERM=truecolor", "USER=operator")
	const launch = 90 * time.Second // the baseline verify compiles the calc tests first
	tm.waitText(launch, "Remote task", "plan · running", strings.TrimSpace(agent.ReadyMarker))

	const correction = "over ssh: keep Add pure"
	tm.answer("c", correction, 5*time.Second, "correction: ")
	tm.waitText(20*time.Second, "received human decision: "+correction, "delivered to session")

	tm.keys("q")
	s := tm.waitText(20*time.Second, "console exited with status 0")
	require.Contains(t, strings.Join(strings.Fields(s), " "), "detached: 1 agent keeps running", s)

	inputs, err := agent.ReadInputLog(f.record)
	require.NoError(t, err)
	n := 0
	for _, in := range inputs {
		if in.Kind == agent.InputDecision {
			n++
			require.Contains(t, in.Text, correction)
		}
	}
	require.Equal(t, 1, n, "the agent received the correction exactly once")
}
