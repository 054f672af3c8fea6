package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/postgres/pgtest"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// refusalsOf returns the bad-signature refusals recorded for id.
func (f *fleet) refusalsOf(t testing.TB, id task.ID) []task.Event {
	t.Helper()
	evs, err := f.st.EventList(context.Background(), store.EventListParams{TaskID: id})
	require.NoError(t, err)
	var out []task.Event
	for _, e := range evs {
		if e.Kind == task.EvRefusal && e.Reason == task.ReasonBadSignature {
			out = append(out, e)
		}
	}
	return out
}

// A task row whose verify command another machine changed in the shared
// PostgreSQL store (a plain UPDATE) is refused by every engine of the
// fleet, each naming the bad signature and itself; nothing of it runs,
// while a task added through an engine runs as before.
func TestFleetRefusesAnEditedTask(t *testing.T) {
	parallel(t)
	f := newFleet(t, []string{"m1", "m2"}, 1, 0)
	ctx := context.Background()
	r, err := repo.Open(f.engines["m1"].dir)
	require.NoError(t, err)
	tk, err := coord.Prepare(task.Task{Title: "edited", Goal: project.Goal, Verify: project.VerifyCommand,
		Harness: "scripted", Pipeline: task.Pipeline{task.PhaseImplement}}, r, time.Now())
	require.NoError(t, err)
	require.NoError(t, f.st.TaskInsert(ctx, signedTask(t, tk)))
	pwned := filepath.Join(t.TempDir(), "pwned")
	conn, err := pgx.Connect(ctx, f.url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, `UPDATE tasks SET verify = $1 WHERE id = $2`, "touch "+pwned, string(tk.ID))
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())

	f.start(t, "m1")
	f.start(t, "m2")
	f.waitStore(t, 60*time.Second, "both engines refuse the edited task", func() bool {
		by := map[string]bool{}
		for _, e := range f.refusalsOf(t, tk.ID) {
			require.Contains(t, e.Text, "signature does not match its goal, verify command, harness and pipeline")
			for _, h := range []string{"m1", "m2"} {
				if strings.Contains(e.Text, "Refused by the engine on "+h+".") {
					by[h] = true
				}
			}
		}
		return by["m1"] && by["m2"]
	})
	good := f.add(t, "m2", 1)
	f.waitStore(t, 120*time.Second, "the signed task runs", func() bool { return f.allAwaiting(t, good) })

	sessions, err := f.st.SessionList(ctx, tk.ID)
	require.NoError(t, err)
	require.Empty(t, sessions, "no engine launched an agent for the edited task")
	_, err = os.Stat(pwned)
	require.ErrorIs(t, err, os.ErrNotExist, "no engine ran the edited verify command")
	got, err := f.st.TaskGet(ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, task.StateQueued, got.State)
}

// The store's password reaches no process an agent can look at: not the
// agent's own environment, not its session host's, not the engine's, nor
// any other ancestor's environment or command line.
func TestAgentCannotReadTheStorePassword(t *testing.T) {
	parallel(t)
	const password = "pw-only-the-engine-knows"
	u, err := url.Parse(pgtest.Start(t).NewDatabase(t))
	require.NoError(t, err)
	u.User = url.UserPassword(u.User.Username(), password) // trust authentication ignores it; it still travels
	f := newFleetOn(t, u.String(), []string{"m1"}, 1, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveStall}},
	}})
	f.start(t, "m1")
	ids := f.add(t, "m1", 1)

	var launched task.Event
	f.waitStore(t, 60*time.Second, "the agent is launched", func() bool {
		evs, err := f.st.EventList(context.Background(), store.EventListParams{TaskID: ids[0]})
		require.NoError(t, err)
		for _, e := range evs {
			if e.Kind == task.EvSessionLaunched {
				launched = e
				return true
			}
		}
		return false
	})
	var d coord.LaunchedData
	require.NoError(t, json.Unmarshal(launched.Data, &d))
	require.Positive(t, d.Pid)
	require.Positive(t, d.HostPid, "the engine runs its sessions in session hosts")

	seen := map[int]bool{}
	for pid := d.Pid; pid > 1 && !seen[pid]; pid = parentOf(t, pid) {
		seen[pid] = true
		for _, what := range []string{"environ", "cmdline"} {
			b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), what))
			require.NoError(t, err, "the agent's ancestor %d is alive", pid)
			require.False(t, bytes.Contains(b, []byte(password)), "the store password is in /proc/%d/%s", pid, what)
		}
	}
	require.True(t, seen[d.HostPid], "the session host is among the agent's ancestors")
	require.True(t, seen[f.engines["m1"].cmd.Process.Pid], "the engine is among the agent's ancestors")
}

// parentOf reads a process's parent from /proc/PID/stat.
func parentOf(t testing.TB, pid int) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	require.NoError(t, err)
	i := bytes.LastIndexByte(b, ')')
	require.Positive(t, i)
	fields := strings.Fields(string(b[i+1:]))
	require.GreaterOrEqual(t, len(fields), 2)
	ppid, err := strconv.Atoi(fields[1])
	require.NoError(t, err)
	return ppid
}
