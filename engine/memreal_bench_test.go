package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/host"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// realEngine runs, for the memory benchmarks, the engine as an operator
// does: `bin engine --foreground` on a repository whose n tasks each run
// script in sh (it must print READY) in a session host, as the child of
// that engine. Measured as this test process instead, the engine would
// map a test binary that nothing else maps (some 24 MiB of it), where the
// real engine, console and hosts share one binary's pages. It returns
// the repository, the engine's pid and its hosts' pids once every brief
// was delivered.
func realEngine(b *testing.B, bin string, n int, script string) (string, int, []int) {
	b.Helper()
	root := filepath.Join(b.TempDir(), "repo")
	require.NoError(b, os.Mkdir(root, 0o755))
	require.NoError(b, project.WriteProject(root))
	argv, err := json.Marshal([]string{"sh", "-c", script})
	require.NoError(b, err)
	conf := fmt.Sprintf("[harness.cat]\nargv = %s\nenv = [\"PATH\", \"HOME\"]\ndelivery = \"type\"\nsubmit = \"\\r\"\nready = \"READY\"\nquiet = \"100ms\"\n\n"+
		"[[slots]]\nname = \"cat\"\nharness = \"cat\"\ncapacity = %d\n", argv, n)
	require.NoError(b, os.WriteFile(filepath.Join(root, "orchestra.toml"), []byte(conf), 0o644))
	run := func(args ...string) string {
		c := exec.Command(bin, args...)
		c.Dir = root
		out, err := c.CombinedOutput()
		require.NoError(b, err, "%s %v: %s", bin, args, out)
		return string(out)
	}
	eng := exec.Command(bin, "engine", "--foreground")
	eng.Dir = root
	eng.Env = append(os.Environ(), host.AnchorEnv+"="+strconv.Itoa(os.Getpid()))
	var logb bytes.Buffer
	eng.Stdout, eng.Stderr = &logb, &logb
	require.NoError(b, eng.Start())
	b.Cleanup(func() {
		c := exec.Command(bin, "stop")
		c.Dir = root
		_ = c.Run()
		_ = eng.Process.Kill()
		_ = eng.Wait()
	})
	sock := PathsFor(root).Socket
	waitFor(b, func() bool { _, err := os.Stat(sock); return err == nil })
	for i := range n {
		run("add", "--title", fmt.Sprintf("idle %d", i+1), "--goal", "sit", "--verify", "true", "--harness", "cat", "--pipeline", "implement")
	}
	// Every brief typed (the agent printed READY), as the in-process
	// engine's benchmarks wait for, then every host.
	waitFor(b, func() bool { return strings.Count(run("events"), string(task.EvBriefDelivered)) >= n })
	var hosts []int
	waitFor(b, func() bool {
		hosts = childPids(b, eng.Process.Pid)
		return len(hosts) == n
	})
	return root, eng.Process.Pid, hosts
}

// childPids lists the session hosts whose parent is pid.
func childPids(b *testing.B, parent int) []int {
	b.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(b, err)
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmd, []byte("\x00host\x00--socket\x00")) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			f := strings.Fields(string(st[bytes.LastIndexByte(st, ')')+1:]))
			if ppid, _ := strconv.Atoi(f[1]); ppid == parent {
				out = append(out, pid)
			}
		}
	}
	return out
}
