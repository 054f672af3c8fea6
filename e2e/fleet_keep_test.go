package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// awaitingFix is the script of an agent that waits for a human decision,
// then fixes calc.go: its agents stay live until the test corrects them.
func awaitingFix() agent.Script {
	return agent.Script{Phases: map[task.Phase][]agent.Entry{task.PhaseImplement: {{
		AwaitDecision: true, Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}},
	}}}}
}

// setTTL rewrites every clone's [fleet] ttl (before its engine starts).
func (f *fleet) setTTL(t testing.TB, d time.Duration) {
	t.Helper()
	for _, e := range f.engines {
		path := filepath.Join(e.dir, "orchestra.toml")
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		conf := strings.Replace(string(data), `ttl = "`+fleetTTL.String()+`"`, `ttl = "`+d.String()+`"`, 1)
		require.NotEqual(t, string(data), conf)
		require.NoError(t, os.WriteFile(path, []byte(conf), 0o600))
	}
}

// liveSessions returns the confirmed and briefed implement sessions of ids
// that holder holds.
func (f *fleet) liveSessions(t testing.TB, ids []task.ID, holder string) []store.Session {
	t.Helper()
	var out []store.Session
	for _, id := range ids {
		ss, err := f.st.SessionList(context.Background(), id)
		require.NoError(t, err)
		for _, s := range ss {
			if s.Holder == holder && s.Status == store.SessionConfirmed && s.Brief != "" && s.Phase == task.PhaseImplement {
				out = append(out, s)
			}
		}
	}
	return out
}

// launched returns what the session.launched event of session says.
func (f *fleet) launched(t testing.TB, s store.Session) coord.LaunchedData {
	t.Helper()
	evs, err := f.st.EventList(context.Background(), store.EventListParams{TaskID: s.TaskID})
	require.NoError(t, err)
	for _, ev := range evs {
		var d coord.LaunchedData
		if ev.Kind == task.EvSessionLaunched && ev.SessionID == s.ID && json.Unmarshal(ev.Data, &d) == nil && d.Pid > 0 {
			return d
		}
	}
	t.Fatalf("no session.launched event for session %s", s.ID)
	return coord.LaunchedData{}
}

// correct types a decision into task id's live session through host's
// engine.
func (f *fleet) correct(t testing.TB, host string, id task.ID, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := engine.Dial(ctx, engine.PathsFor(f.engines[host].dir).Socket, engine.Options{Kind: "cli"})
	require.NoError(t, err)
	defer cl.Close()
	_, err = cl.Do(ctx, coord.Command{Kind: coord.CmdCorrect, TaskID: id, Text: text, Author: "test"})
	require.NoError(t, err)
}

// TestFleetStopKeepingAgentsHandsThemToTheMachinesNextEngine: on a fleet
// of two engines (two clones on PostgreSQL), `stop --keep-agents` on
// machine-a (an upgrade of its binary) leaves its agents running and its
// tasks leased; machine-b takes none of them over, and the engine started
// next on machine-a takes up the very same agent processes. Every task
// then finishes green with one session and one attempt: none ran twice.
func TestFleetStopKeepingAgentsHandsThemToTheMachinesNextEngine(t *testing.T) {
	parallel(t)
	f := newFleetWith(t, []string{"machine-a", "machine-b"}, 2, awaitingFix())
	// The kept agents are machine-a's next engine's for a TTL after the
	// stop: room for a loaded machine to start it.
	const ttl = 5 * time.Second
	f.setTTL(t, ttl)
	ctx := context.Background()
	f.start(t, "machine-a")
	ids := f.add(t, "machine-a", 4)
	a := f.engineOf(t, "machine-a")
	f.waitStore(t, 3*time.Minute, "machine-a runs two agents", func() bool { return len(f.liveSessions(t, ids, a.ID)) == 2 })
	f.start(t, "machine-b")
	b := f.engineOf(t, "machine-b")
	f.waitStore(t, 3*time.Minute, "machine-b runs the other two", func() bool { return len(f.liveSessions(t, ids, b.ID)) == 2 })
	kept := f.liveSessions(t, ids, a.ID)
	pids := map[string]int{}
	for _, s := range kept {
		pids[s.ID] = f.launched(t, s).Pid
	}

	before := time.Now()
	stop := exec.Command(f.bin, "stop", "--keep-agents", "-C", f.engines["machine-a"].dir)
	stop.Env = f.env()
	out, err := stop.CombinedOutput()
	require.NoError(t, err, "stop --keep-agents: %s", out)
	<-f.engines["machine-a"].done
	stopped := time.Now()
	for id, pid := range pids {
		require.NoError(t, syscall.Kill(pid, 0), "session %s's agent (pid %d) stopped with its engine", id, pid)
	}
	// Until machine-a's next engine is up, machine-b takes nothing over:
	// its rescue has run many ticks by the time that engine answers.
	f.start(t, "machine-a")
	a2 := f.engineOf(t, "machine-a")
	f.waitStore(t, time.Minute, "machine-a's new engine takes up both agents", func() bool { return len(f.liveSessions(t, ids, a2.ID)) == 2 })
	t.Logf("machine-a's next engine held the kept sessions %s after the stop (TTL %s)", time.Since(stopped).Round(time.Millisecond), ttl)
	f.noTakeover(t, ids, before)
	for _, s := range kept {
		evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: s.TaskID})
		require.NoError(t, err)
		var adopted []coord.AdoptedData
		for _, ev := range evs {
			var d coord.AdoptedData
			if ev.Kind == task.EvSessionAdopted && ev.SessionID == s.ID && json.Unmarshal(ev.Data, &d) == nil {
				adopted = append(adopted, d)
			}
		}
		require.Len(t, adopted, 1, "task %s: session %s taken up once", s.TaskID, s.ID)
		require.Equal(t, pids[s.ID], adopted[0].Pid, "task %s: the same agent process is taken up", s.TaskID)
		require.Nil(t, adopted[0].ExitCode, "task %s: the agent still ran", s.TaskID)
		got, err := f.st.SessionGet(ctx, s.ID)
		require.NoError(t, err)
		require.Equal(t, store.SessionConfirmed, got.Status, "task %s: the kept session was never marked ended", s.TaskID)
	}

	for _, id := range ids {
		l, err := f.st.LeaseGet(ctx, id)
		require.NoError(t, err)
		host := "machine-b"
		if l.Holder == a2.ID {
			host = "machine-a"
		}
		f.correct(t, host, id, "go ahead")
	}
	f.waitStore(t, 5*time.Minute, "every task green", func() bool { return f.allAwaiting(t, ids) })
	sessions := f.checkFinished(t, ids)
	for _, id := range ids {
		require.Len(t, sessions[id], 1, "task %s ran once: %v", id, sessions[id])
		tk, err := f.st.TaskGet(ctx, id)
		require.NoError(t, err)
		require.Equal(t, 1, tk.Attempt, "task %s: one attempt", id)
		evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: id})
		require.NoError(t, err)
		n := 0
		for _, ev := range evs {
			if ev.Kind == task.EvSessionLaunched {
				n++
			}
			require.NotEqual(t, task.EvTaskRequeued, ev.Kind, "task %s was requeued: %s", id, ev.Text)
		}
		require.Equal(t, 1, n, "task %s: one launch", id)
	}
}
