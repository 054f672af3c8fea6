package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestMain lets the test binary act as the scripted agent.
func TestMain(m *testing.M) {
	agent.MainIfReexec()
	os.Exit(m.Run())
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
	e, err := Start(context.Background(), Params{Dir: root, Version: "test", Open: func(dir string) (*coord.Opened, error) {
		return coord.Open(coord.OpenParams{Dir: dir, Vars: map[string]string{"script": script},
			Settle: 30 * time.Millisecond, SampleEvery: 100 * time.Millisecond,
			Tweak: func(c *config.Config) {
				h := c.Harness["scripted"]
				h.SetEnv = map[string]string{agent.ReexecEnv: "1"}
				h.Env = append(h.Env, "GOCACHE", "GOPATH", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY")
				c.Harness["scripted"] = h
				c.Pane = config.Pane{Cols: 80, Rows: 24}
				c.Lease.Tick.Duration = 100 * time.Millisecond
			}})
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Stop() })
	return &bundle{root: root, record: record, eng: e}
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
