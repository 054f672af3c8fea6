package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/orchestra-tui/orchestra-tui/demo/claudecli"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/fork"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// forkRepo makes a calc repository whose orchestra.toml runs the real
// Claude Code against a model stub as harness "claude" (no slot runs it,
// so a console leaves the task queued), adds one task on it through the
// CLI and returns the root, the task's id and the stub.
func forkRepo(t *testing.T) (string, task.ID, *modelstub.Server) {
	t.Helper()
	bin := claudecli.Require(t)
	last := func(r modelstub.Request) string {
		m, _ := r.LastUser()
		return m.Text
	}
	srv := modelstub.New([]modelstub.Rule{
		{Name: "fork", When: func(r modelstub.Request) bool { return strings.Contains(last(r), "You are continuing") },
			Reply: func(modelstub.Request) modelstub.Reply {
				return modelstub.Reply{Text: "Block done: parser written.", Model: "claude-stub-cli",
					Usage: modelstub.Usage{InputTokens: 17, OutputTokens: 53, CacheReadInputTokens: 5600}}
			}},
		{Name: "train", When: func(r modelstub.Request) bool { return strings.Contains(last(r), "## Goal") },
			Reply: func(modelstub.Request) modelstub.Reply {
				return modelstub.Reply{Text: "Read; waiting for the first block.", Model: "claude-stub-cli",
					Usage: modelstub.Usage{InputTokens: 1201, OutputTokens: 301, CacheCreationInputTokens: 4001}}
			}},
	})
	srv.Logf = t.Logf
	url, err := srv.Start()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })

	root, home := t.TempDir(), t.TempDir()
	require.NoError(t, project.WriteProject(root))
	env := modelstub.ClaudeSetEnv(home, url)
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var setEnv []string
	for _, k := range keys {
		setEnv = append(setEnv, fmt.Sprintf("%s = %q", k, env[k]))
	}
	conf := fmt.Sprintf(`[harness.claude]
argv = [%q, "--allowedTools", "Bash"]
env = ["PATH"]
set_env = { %s }

[[slots]]
name = "scripted"
harness = "scripted"
capacity = 1

[prices.claude-stub-cli]
input = 3.0
output = 15.0
cache_creation = 3.75
cache_read = 0.3
`, bin, strings.Join(setEnv, ", "))
	require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"), []byte(conf), 0o644))
	require.NoError(t, project.Git(root, "add", "orchestra.toml"))
	require.NoError(t, project.Git(root, "commit", "-q", "-m", "orchestra.toml"))

	var stdout, stderr bytes.Buffer
	code := run([]string{"add", "-C", root, "--title", "Fix calc", "--goal", project.Goal, "--verify", project.VerifyCommand,
		"--harness", "claude", "--pipeline", "implement"}, nil, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	ts := tasksIn(t, root)
	require.Len(t, ts, 1)
	id := ts[0].ID
	require.NoError(t, modelstub.SeedHome(home, filepath.Join(root, ".orchestra", "worktrees", string(id))))
	return root, id, srv
}

// forkCLI runs `orchestra-tui fork ARGS -C root` and returns its stdout.
func forkCLI(t *testing.T, root string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run(append(append([]string{"fork"}, args...), "-C", root), nil, &stdout, &stderr)
	require.Equal(t, 0, code, "fork %v: %s", args, stderr.String())
	t.Logf("fork %s (%s):\n%s", args[0], time.Since(start).Round(time.Millisecond), stdout.String())
	return stdout.String()
}

// requireTrainRunList trains a base, runs a fork and lists the bases
// through the CLI, checking what each prints.
func requireTrainRunList(t *testing.T, root string, id task.ID) string {
	t.Helper()
	ref := string(id)[len(id)-6:]
	require.Contains(t, forkCLI(t, root, "list"), "no trained bases")

	out := forkCLI(t, root, "train", ref, "--harness", "claude")
	require.Contains(t, out, "Trained base ")
	require.Contains(t, out, "on claude-stub-cli")
	require.Contains(t, out, "1201 in, 301 out, 4001 cache write")
	baseID := strings.Fields(strings.TrimPrefix(out, "Trained base "))[0]

	out = forkCLI(t, root, "run", ref, "--prompt", "Block 1: write the parser.")
	require.Contains(t, out, "of base "+baseID[:8]+" read the base from the cache")
	require.Contains(t, out, "Reply: Block done: parser written.")
	// The delta: the fork's own tokens, its cache reads beyond the base's
	// 5503-token prefix included, at the configured price.
	require.Contains(t, out, "Delta cost (beyond the base): $0.0009")
	require.Contains(t, out, "prefix read from cache: 5503 tokens")

	out = forkCLI(t, root, "list")
	require.Contains(t, out, baseID)
	require.Contains(t, out, "warm ")
	require.Contains(t, out, "claude-stub-cli")
	require.Regexp(t, `(wait|keep-warm|let-expire) at \d\d:\d\d:\d\d`, out)
	require.Contains(t, out, baseID[:8]+": ")
	return baseID
}

// Without a console the CLI trains, forks and lists against the store.
func TestForkCLIWithoutConsole(t *testing.T) {
	t.Parallel()
	root, id, srv := forkRepo(t)
	requireTrainRunList(t, root, id)
	rules := map[string]int{}
	for _, e := range srv.Exchanges() {
		rules[e.Rule]++
	}
	require.Equal(t, 1, rules["train"])
	require.Equal(t, 1, rules["fork"])

	// A fork of a task without a base says how to get one.
	var stdout, stderr bytes.Buffer
	code := run([]string{"fork", "run", "NOPE", "--prompt", "x", "-C", root}, nil, &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Contains(t, stderr.String(), `no task matches "NOPE"`)
}

// With an engine running the CLI goes through its socket: the engine
// publishes the training's and the fork's usage to subscribers
// and counts them in the task's usage at once.
func TestForkCLIThroughConsole(t *testing.T) {
	t.Parallel()
	root, id, _ := forkRepo(t)
	e, err := engine.Start(context.Background(), engine.Params{Dir: root, Version: "test"})
	require.NoError(t, err)
	o := e.Opened
	notices, unsub := o.Subscribe()
	t.Cleanup(func() {
		unsub()
		require.NoError(t, e.Stop())
	})

	baseID := requireTrainRunList(t, root, id)
	var roles []string
	deadline := time.After(10 * time.Second)
	for len(roles) < 2 {
		select {
		case n := <-notices:
			if n.Event == nil || n.Event.Kind != task.EvUsage {
				continue
			}
			var d fork.UsageData
			require.NoError(t, json.Unmarshal(n.Event.Data, &d))
			require.Equal(t, baseID, d.BaseID)
			roles = append(roles, d.Role)
		case <-deadline:
			t.Fatalf("the console published %v, not the base's and the fork's usage", roles)
		}
	}
	require.Equal(t, []string{fork.RoleBase, fork.RoleFork}, roles)
	var u coord.Usage
	for _, tv := range o.Snapshot().Tasks {
		if tv.Task.ID == id {
			u = tv.Usage
		}
	}
	require.EqualValues(t, 1201+17, u.InputTokens)
	require.EqualValues(t, 5600, u.CacheReadTokens)
}
