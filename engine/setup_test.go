package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/host"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// TestMain lets the test binary act as the scripted agent.
func TestMain(m *testing.M) {
	anchorToThisBinary()
	if len(os.Args) > 1 && os.Args[1] == "host" {
		os.Exit(host.Main(os.Args[2:], os.Stderr)) // a session host the engine started
	}
	if len(os.Args) > 2 && os.Args[1] == "echo" {
		os.Exit(echoMain(os.Args[2])) // BenchmarkSocketRoundTrip's other end
	}
	if raw := os.Getenv(engineChildEnv); raw != "" {
		os.Exit(engineChild(raw)) // an engine in a process of its own
	}
	agent.MainIfReexec()
	os.Exit(m.Run())
}

// anchorToThisBinary has every engine and session host this test binary
// starts end with it (host.AnchorEnv), even when it dies of its timeout;
// a re-executed child keeps its parent's anchor.
func anchorToThisBinary() {
	if os.Getenv(host.AnchorEnv) == "" {
		os.Setenv(host.AnchorEnv, strconv.Itoa(os.Getpid()))
	}
}

type bundle struct {
	root   string
	record string // the scripted agent's record directory
	eng    *Engine
}

// setup makes a calc project and starts an engine on it whose scripted
// harness is this test binary running sc.
func setup(t *testing.T, sc agent.Script) *bundle {
	t.Helper()
	return setupWith(t, sc, false)
}

// setupWith is setup; with hosts set, every session runs in a session
// host (this test binary run as `host`), as in the background engine.
func setupWith(t *testing.T, sc agent.Script, hosts bool) *bundle {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	record := t.TempDir()
	sc.RecordDir = record
	zero := 0
	if sc.PaceMS == nil {
		sc.PaceMS = &zero
	}
	data, err := json.Marshal(sc)
	require.NoError(t, err)
	script := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(script, data, 0o644))
	e, err := Start(context.Background(), Params{Dir: root, Version: "test", Open: testOpen(script, hosts)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Stop() })
	return &bundle{root: root, record: record, eng: e}
}

// testOpen opens the test engine's coordinator: the scripted harness is
// this test binary running script, with short clocks; with hosts set its
// sessions run in session hosts.
func testOpen(script string, hosts bool) func(dir string) (*coord.Opened, error) {
	return testOpenWith(script, hosts, nil)
}

// testOpenWith is testOpen with tweak applied to the configuration last.
func testOpenWith(script string, hosts bool, tweak func(*config.Config)) func(dir string) (*coord.Opened, error) {
	return func(dir string) (*coord.Opened, error) {
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
		return coord.Open(coord.OpenParams{Dir: dir, Vars: map[string]string{"script": script},
			Settle: 30 * time.Millisecond, SampleEvery: 100 * time.Millisecond, Start: start, Hosts: hs,
			Tweak: func(c *config.Config) {
				h := c.Harness["scripted"]
				h.SetEnv = map[string]string{agent.ReexecEnv: "1"}
				h.Env = append(h.Env, "GOCACHE", "GOPATH", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY")
				// The agent is this race-built test binary: on a loaded
				// machine (every package's tests at once, on 2 cores) it
				// has taken longer than the harness's 10s to start.
				h.LaunchTimeout = session.Duration{Duration: time.Minute}
				c.Harness["scripted"] = h
				// An agent whose ready marker never shows: its launch
				// stays unconfirmed for as long as a test needs.
				c.Harness["noready"] = session.Spec{Name: "noready", Argv: []string{"sh", "-c", "echo starting; exec cat"},
					Env: []string{"PATH", "HOME"}, Delivery: "type", Submit: "\r", Ready: "NEVER-SHOWN",
					LaunchTimeout: session.Duration{Duration: 10 * time.Minute}}
				c.Pane = config.Pane{Cols: 80, Rows: 24}
				c.Lease.Tick.Duration = 100 * time.Millisecond
				if tweak != nil {
					tweak(c)
				}
			}})
	}
}

func (b *bundle) dial(t *testing.T, watch bool) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := Dial(ctx, b.eng.Paths.Socket, Options{Watch: watch, Version: "test", Kind: "console"})
	require.NoError(t, err)
	t.Cleanup(func() { cl.Close() })
	return cl
}

func addCalc(t *testing.T, e coord.Engine, p task.Pipeline) task.ID {
	t.Helper()
	res, err := e.Do(context.Background(), coord.Command{Kind: coord.CmdAdd, Task: &task.Task{
		Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance, Verify: project.VerifyCommand,
		Harness: "scripted", Pipeline: p,
	}})
	require.NoError(t, err)
	return res.TaskID
}

// waitEvent reads notices until one satisfies ok.
func waitEvent(t *testing.T, ch <-chan coord.Notice, ok func(task.Event) bool) task.Event {
	t.Helper()
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	var seen []string
	for {
		select {
		case n, open := <-ch:
			require.True(t, open, "notices closed; events so far: %q", seen)
			if n.Event == nil {
				continue
			}
			seen = append(seen, string(n.Event.Kind)+" "+n.Event.Text)
			if ok(*n.Event) {
				return *n.Event
			}
		case <-deadline.C:
			t.Fatalf("timed out; events so far: %q", seen)
		}
	}
}

func kindIs(k task.Kind) func(task.Event) bool {
	return func(e task.Event) bool { return e.Kind == k }
}
