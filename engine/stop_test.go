package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/host"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// TestStopEndsEveryProcessOfEverySession: eight live sessions, one of which
// left a grandchild that started its own session (a daemon); a client's stop
// returns within ten seconds with a line per session, and not one of their
// processes is left in the process table.
func TestStopEndsEveryProcessOfEverySession(t *testing.T) {
	t.Parallel()
	stopEverything(t, false)
}

// TestStopEndsEveryProcessOfEverySessionInHosts is the same with every
// session in a session host, as the background engine runs them: the hosts
// are gone too.
func TestStopEndsEveryProcessOfEverySessionInHosts(t *testing.T) {
	t.Parallel()
	stopEverything(t, true)
}

func stopEverything(t *testing.T, hosts bool) {
	const n = 8
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	plain := session.Spec{Name: "plain", Argv: []string{"sh", "-c", "echo READY; exec cat"}, Env: []string{"PATH", "HOME"},
		Delivery: "type", Submit: "\r", Ready: "READY", Quiet: session.Duration{Duration: 100 * time.Millisecond}}
	daemon := plain
	daemon.Name = "daemon"
	daemon.Argv = []string{"sh", "-c", `setsid sh -c 'echo $$ > daemon.pid; exec sleep 1000' </dev/null >/dev/null 2>&1 & echo READY; exec cat`}
	e, err := Start(context.Background(), Params{Dir: root, Version: "test", Open: func(dir string) (*coord.Opened, error) {
		var start worker.Starter
		var hs coord.Hosts
		if hosts {
			self, err := os.Executable()
			if err != nil {
				return nil, err
			}
			l := host.Launcher{Self: self, Root: dir, Version: "test"}
			start, hs = l.Starter(), SessionHosts(l)
		}
		return coord.Open(coord.OpenParams{Dir: dir, Settle: 30 * time.Millisecond, SampleEvery: 100 * time.Millisecond, Start: start, Hosts: hs,
			Tweak: func(c *config.Config) {
				c.Harness["plain"], c.Harness["daemon"] = plain, daemon
				c.Slots = []config.Slot{{Name: "plain", Harness: "plain", Capacity: n}, {Name: "daemon", Harness: "daemon", Capacity: 1}}
				c.Lease.Tick.Duration = 100 * time.Millisecond
			}})
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Stop() })
	ch, unsub := e.Subscribe()
	defer unsub()
	for i := range n {
		h := "plain"
		if i == 0 {
			h = "daemon"
		}
		_, err := e.Do(context.Background(), coord.Command{Kind: coord.CmdAdd, Task: &task.Task{
			Title: fmt.Sprintf("idle %d", i+1), Goal: "sit", Verify: "true", Harness: h, Pipeline: task.Pipeline{task.PhaseImplement},
		}})
		require.NoError(t, err)
	}
	var pids []int
	delivered := 0
	var seen []string
	deadline := time.After(90 * time.Second)
	per := 1
	if hosts {
		per = 2
	}
	for len(pids) < per*n || delivered < n {
		select {
		case no := <-ch:
			if no.Event == nil {
				continue
			}
			seen = append(seen, string(no.Event.Kind)+" "+no.Event.Text)
			switch no.Event.Kind {
			case task.EvSessionLaunched:
				var d coord.LaunchedData
				require.NoError(t, json.Unmarshal(no.Event.Data, &d))
				pids = append(pids, d.Pid)
				if hosts {
					pids = append(pids, parentOf(t, d.Pid)) // its host
				}
			case task.EvBriefDelivered:
				delivered++
			}
		case <-deadline:
			t.Fatalf("not every session came up; events:\n%s", strings.Join(seen, "\n"))
		}
	}
	m, err := filepath.Glob(filepath.Join(root, task.StateDir, "worktrees", "*", "daemon.pid"))
	require.NoError(t, err)
	require.Len(t, m, 1, "the daemon wrote its pid")
	b, err := os.ReadFile(m[0])
	require.NoError(t, err)
	dpid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	require.NoError(t, processAlive(dpid), "the daemon runs before the stop")
	pids = append(pids, dpid)

	cl := b2client(t, e)
	start := time.Now()
	lines, err := cl.Stop(context.Background())
	took := time.Since(start)
	require.NoError(t, err)
	require.Len(t, lines, n, "%q", lines)
	require.Less(t, took, 10*time.Second, "stop took %s", took)
	for _, pid := range pids {
		if processAlive(pid) == nil {
			st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
			cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			t.Fatalf("pid %d is still in the process table after the stop: %q\n%s", pid, cmd, st)
		}
	}
	<-e.Done()
}

func b2client(t *testing.T, e *Engine) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := Dial(ctx, e.Paths.Socket, Options{Version: "test", Kind: "cli"})
	require.NoError(t, err)
	t.Cleanup(func() { cl.Close() })
	return cl
}
