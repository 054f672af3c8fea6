package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/postgres"
	"github.com/orchestra-tui/orchestra-tui/store/postgres/pgtest"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// A fleet simulates machines on one: a bare repository as the shared
// remote, one clone per machine, each with an engine of the real binary
// (its own [fleet] host), all on one PostgreSQL database.
type fleet struct {
	bin    string
	url    string
	remote string
	st     *postgres.Store
	// changes signals after every write to the database, any engine's.
	changes <-chan struct{}
	script  string
	// environ is added to every command's environment.
	environ []string

	engines map[string]*fleetEngine
}

// fleetEngine is one machine's engine process.
type fleetEngine struct {
	host string
	dir  string
	// env is added to this engine's environment only.
	env  []string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
}

const (
	fleetHeartbeat = 200 * time.Millisecond
	fleetTTL       = time.Second
	fleetTick      = 100 * time.Millisecond
)

// newFleet builds the binary, the database, the remote and one clone per
// host, each configured to run capacity scripted sessions at once with the
// agent pacing its output at paceMS.
func newFleet(t testing.TB, hosts []string, capacity, paceMS int) *fleet {
	t.Helper()
	return newFleetWith(t, hosts, capacity, agent.Script{PaceMS: &paceMS, Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}})
}

// newFleetWith is newFleet with the scripted agent's script.
func newFleetWith(t testing.TB, hosts []string, capacity int, sc agent.Script) *fleet {
	t.Helper()
	return newFleetOn(t, pgtest.Start(t).NewDatabase(t), hosts, capacity, sc)
}

// newFleetOn is newFleetWith on the database at url.
func newFleetOn(t testing.TB, url string, hosts []string, capacity int, sc agent.Script) *fleet {
	t.Helper()
	f := &fleet{bin: buildBinary(t, t.TempDir()), url: url, engines: map[string]*fleetEngine{}}
	ctx := context.Background()
	st, err := postgres.Open(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	f.st = st
	f.changes, err = st.Listen(t.Context())
	require.NoError(t, err)

	base := t.TempDir()
	seed := filepath.Join(base, "seed")
	require.NoError(t, os.Mkdir(seed, 0o755))
	require.NoError(t, project.WriteProject(seed))
	f.remote = filepath.Join(base, "calc.git")
	require.NoError(t, project.Git(base, "init", "-q", "--bare", "-b", "main", f.remote))
	require.NoError(t, project.Git(seed, "push", "-q", f.remote, "main"))

	data, err := json.Marshal(sc)
	require.NoError(t, err)
	f.script = filepath.Join(base, "script.json")
	require.NoError(t, os.WriteFile(f.script, data, 0o600))
	argv, err := json.Marshal([]string{f.bin, "agent", "--script", f.script})
	require.NoError(t, err)
	for _, h := range hosts {
		dir := filepath.Join(base, h)
		require.NoError(t, project.Git(base, "clone", "-q", f.remote, dir))
		conf := fmt.Sprintf(`[harness.scripted]
argv = %s

[lease]
tick = %q

[[slots]]
name = "fleet"
harness = "scripted"
capacity = %d

[fleet]
host = %q
remote = "origin"
heartbeat = %q
ttl = %q
`, argv, fleetTick, capacity, h, fleetHeartbeat, fleetTTL)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "orchestra.toml"), []byte(conf), 0o600))
		f.engines[h] = &fleetEngine{host: h, dir: dir}
	}
	return f
}

// env is the environment of every command: the shared store.
func (f *fleet) env() []string {
	return append(append(os.Environ(), coord.StoreURLEnv+"="+f.url), f.environ...)
}

// start runs host's engine in the foreground, as a service manager would,
// and stops it (SIGTERM) when the test ends unless it was killed.
func (f *fleet) start(t testing.TB, host string) {
	t.Helper()
	e := f.engines[host]
	logf, err := os.Create(filepath.Join(t.TempDir(), host+".log"))
	require.NoError(t, err)
	e.log = logf
	e.cmd = exec.Command(f.bin, "engine", "--foreground", "-C", e.dir)
	e.cmd.Env = append(f.env(), e.env...)
	e.cmd.Stdout, e.cmd.Stderr = logf, logf
	require.NoError(t, e.cmd.Start())
	e.done = make(chan struct{})
	go func() { _ = e.cmd.Wait(); close(e.done) }()
	t.Cleanup(func() {
		_ = e.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-e.done:
		case <-time.After(30 * time.Second):
			_ = e.cmd.Process.Kill()
			<-e.done
		}
		logf.Close()
	})
	// Only its first heartbeat is waited for, which it writes while its
	// coordinator may still load the store: a console attached meanwhile
	// gets its first snapshot once the load is done (engine/watch.go), and
	// a command waits for the loop, which runs after the load.
	f.waitStore(t, 60*time.Second, host+"'s engine beats", func() bool { return f.engineOf(t, host).ID != "" })
}

// engineOf is host's engine as the engines table has it.
func (f *fleet) engineOf(t testing.TB, host string) store.Engine {
	es, err := f.st.EngineList(context.Background())
	require.NoError(t, err)
	for _, e := range es {
		if e.Host == host && e.StoppedAt.IsZero() {
			return e
		}
	}
	return store.Engine{}
}

// add adds n implement-only calc tasks through host's engine.
func (f *fleet) add(t testing.TB, host string, n int) []task.ID {
	t.Helper()
	var ids []task.ID
	for i := range n {
		cmd := exec.Command(f.bin, "add", "-C", f.engines[host].dir, "--title", fmt.Sprintf("fleet %d", i+1),
			"--goal", project.Goal, "--verify", project.VerifyCommand, "--pipeline", "implement", "--harness", "scripted")
		cmd.Env = f.env()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			// What the engine was doing says why it did not answer.
			t.Log(f.logs())
		}
		require.NoError(t, err, "add on %s: stdout %q, stderr %q", host, out, stderr.String())
		fields := strings.Fields(string(out))
		require.NotEmpty(t, fields)
		ids = append(ids, task.ID(fields[len(fields)-1]))
	}
	return ids
}

// waitStore waits, on the database's change signal, until ok holds.
func (f *fleet) waitStore(t testing.TB, d time.Duration, what string, ok func() bool) {
	t.Helper()
	timeout := time.After(d)
	for !ok() {
		select {
		case _, open := <-f.changes:
			require.True(t, open, "the store stopped signalling while waiting for %s", what)
		case <-timeout:
			t.Fatalf("%s: not within %s\n%s", what, d, f.logs())
		}
	}
}

// logs returns every engine's log, for a failure message.
func (f *fleet) logs() string {
	var b strings.Builder
	for h, e := range f.engines {
		if e.log == nil {
			continue
		}
		data, _ := os.ReadFile(e.log.Name())
		fmt.Fprintf(&b, "--- engine %s:\n%s\n", h, data)
	}
	return b.String()
}

// allAwaiting reports whether every task waits for review.
func (f *fleet) allAwaiting(t testing.TB, ids []task.ID) bool {
	for _, id := range ids {
		tk, err := f.st.TaskGet(context.Background(), id)
		require.NoError(t, err)
		require.NotEqual(t, task.StateFailed, tk.State, "task %s failed: %s\n%s", id, tk.Reason, f.logs())
		if tk.State != task.StateAwaitingReview {
			return false
		}
	}
	return true
}

// checkFinished checks what every fleet run must end with: each task green
// and waiting for review, its sessions one at a time (no two live sessions
// of a task overlap), and its branch on the remote with the fix. It
// returns the sessions by task.
func (f *fleet) checkFinished(t *testing.T, ids []task.ID) map[task.ID][]store.Session {
	t.Helper()
	ctx := context.Background()
	sums, err := f.st.TaskSummaries(ctx)
	require.NoError(t, err)
	green := map[task.ID]bool{}
	for _, s := range sums {
		green[s.Task.ID] = s.Task.State == task.StateAwaitingReview && s.Verdict != nil && s.Verdict.Status == verify.StatusOK
	}
	out := map[task.ID][]store.Session{}
	for _, id := range ids {
		require.True(t, green[id], "task %s is not green and waiting for review", id)
		ss, err := f.st.SessionList(ctx, id)
		require.NoError(t, err)
		require.NotEmpty(t, ss)
		slices.SortFunc(ss, func(a, b store.Session) int { return a.StartedAt.Compare(b.StartedAt) })
		for i, s := range ss {
			require.False(t, s.EndedAt.IsZero(), "session %s of task %s never ended", s.ID, id)
			if i > 0 {
				prev := ss[i-1]
				require.False(t, prev.EndedAt.After(s.StartedAt),
					"task %s: session %s (%s, %s to %s) overlaps session %s (%s, from %s)",
					id, prev.ID, prev.Holder, prev.StartedAt, prev.EndedAt, s.ID, s.Holder, s.StartedAt)
			}
		}
		out[id] = ss

		tk, err := f.st.TaskGet(ctx, id)
		require.NoError(t, err)
		calc, err := exec.Command("git", "--git-dir", f.remote, "show", tk.Branch+":calc.go").CombinedOutput()
		require.NoError(t, err, "task %s: branch %s is not on the remote: %s", id, tk.Branch, calc)
		require.Equal(t, project.CalcFixed, string(calc), "task %s: the remote's branch has the fix", id)
	}
	return out
}

// TestFleetTwoEnginesOneQueue runs 20 tasks on two engines (two clones of
// one repository, one bare remote, one database): every task finishes
// green, each ran on one engine at a time, both engines took work from the
// one queue, and every task branch is on the remote.
func TestFleetTwoEnginesOneQueue(t *testing.T) {
	parallel(t)
	f := newFleet(t, []string{"machine-a", "machine-b"}, 3, 10)
	f.start(t, "machine-a")
	f.start(t, "machine-b")
	ids := f.add(t, "machine-a", 20)
	f.waitStore(t, 8*time.Minute, "every task green", func() bool { return f.allAwaiting(t, ids) })
	sessions := f.checkFinished(t, ids)
	ran := map[string]int{}
	for _, ss := range sessions {
		for _, s := range ss {
			ran[s.Holder]++
		}
	}
	require.Len(t, ran, 2, "both engines took tasks from the one queue: %v", ran)
	t.Logf("sessions per engine: %v", ran)
}

// lostAge reads, from a takeover's event, how long after the lost engine's
// last heartbeat its task was taken over.
var lostAge = regexp.MustCompile(`last beat (\S+) ago`)

// TestFleetFailover shows machine-b's console machine-a's tasks with the
// machine they run on, delivers a correction typed there into a session
// machine-a holds, then kills one engine and its agents with SIGKILL (a machine
// lost) while it runs implement sessions: the other engine takes those tasks
// over within the TTL plus a tick of the last heartbeat, with a continuity
// brief and no attempt charged, and every task ends green; a write replayed
// afterwards with the dead engine's fencing token is refused.
func TestFleetFailover(t *testing.T) {
	parallel(t)
	f := newFleet(t, []string{"machine-a", "machine-b"}, 2, 300)
	ctx := context.Background()
	f.start(t, "machine-a")
	e0 := f.engines["machine-a"]
	ids := f.add(t, "machine-a", 4)
	// A takes what it can before B exists, so A surely holds work.
	a := f.engineOf(t, "machine-a")
	var held []store.Session
	f.waitStore(t, 3*time.Minute, "machine-a runs implement sessions", func() bool {
		held = held[:0]
		for _, id := range ids {
			ss, err := f.st.SessionList(ctx, id)
			require.NoError(t, err)
			for _, s := range ss {
				if s.Holder == a.ID && s.Status == store.SessionConfirmed && s.Phase == task.PhaseImplement {
					held = append(held, s)
				}
			}
		}
		return len(held) == 2
	})
	f.start(t, "machine-b")
	// One console for the fleet: attached to machine-b's engine, it lists
	// the tasks machine-a runs with the machine they run on, and so does
	// status.
	cl, err := engine.Dial(ctx, engine.PathsFor(f.engines["machine-b"].dir).Socket, engine.Options{Watch: true, Kind: "console"})
	require.NoError(t, err)
	defer cl.Close()
	onA := func(tv coord.TaskView) bool {
		for _, s := range held {
			if s.TaskID == tv.Task.ID {
				return true
			}
		}
		return false
	}
	f.waitStore(t, time.Minute, "machine-b's console shows machine-a's tasks on machine-a", func() bool {
		n := 0
		for _, tv := range cl.Snapshot().Tasks {
			if onA(tv) && tv.Host == "machine-a" {
				n++
			}
		}
		return n == len(held)
	})
	status := exec.Command(f.bin, "status", "--json", "-C", f.engines["machine-b"].dir)
	status.Env = f.env()
	out, err := status.Output()
	require.NoError(t, err)
	var rows []struct {
		ID   task.ID `json:"id"`
		Host string  `json:"host"`
	}
	require.NoError(t, json.Unmarshal(out, &rows))
	for _, r := range rows {
		for _, s := range held {
			if s.TaskID == r.ID {
				require.Equal(t, "machine-a", r.Host, "status names the machine: %s", out)
			}
		}
	}
	// A correction typed in machine-b's console reaches the live session
	// machine-a's engine holds, once, and its pane shows it.
	const correction = "from machine-b: keep Add pure"
	target := held[0]
	_, err = cl.Do(ctx, coord.Command{Kind: coord.CmdCorrect, TaskID: target.TaskID, Text: correction, Author: "ana"})
	require.NoError(t, err)
	clA, err := engine.Dial(ctx, engine.PathsFor(e0.dir).Socket, engine.Options{Watch: true, Kind: "console"})
	require.NoError(t, err)
	defer clA.Close()
	f.waitStore(t, time.Minute, "machine-a types machine-b's correction into its session", func() bool {
		ds, err := f.st.DeliveryList(ctx, target.TaskID)
		require.NoError(t, err)
		return len(ds) == 1 && ds[0].SessionID == target.ID
	})
	f.waitStore(t, time.Minute, "the agent on machine-a echoes the correction", func() bool {
		v, ok := clA.Pane(target.TaskID)
		return ok && strings.Contains(ansi.Strip(v.Render()), "received human decision: "+correction)
	})
	var stale []store.Session
	leases := map[task.ID]int64{}
	for _, s := range held {
		l, err := f.st.LeaseGet(ctx, s.TaskID)
		require.NoError(t, err)
		require.Equal(t, a.ID, l.Holder, "the lease names the engine that holds it")
		leases[s.TaskID] = l.Token
		stale = append(stale, s)
	}

	// The machine is lost: the engine and every agent it ran.
	e := f.engines["machine-a"]
	require.NoError(t, e.cmd.Process.Signal(syscall.SIGKILL))
	<-e.done
	for _, s := range stale {
		evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: s.TaskID})
		require.NoError(t, err)
		for _, ev := range evs {
			var d coord.LaunchedData
			if ev.Kind == task.EvSessionLaunched && ev.SessionID == s.ID && json.Unmarshal(ev.Data, &d) == nil && d.Pid > 0 {
				_ = syscall.Kill(-d.Pid, syscall.SIGKILL)
				if d.HostPid > 0 { // its session host goes with the machine
					_ = syscall.Kill(d.HostPid, syscall.SIGKILL)
				}
			}
		}
	}

	f.waitStore(t, 8*time.Minute, "every task green on machine-b", func() bool { return f.allAwaiting(t, ids) })
	sessions := f.checkFinished(t, ids)
	b := f.engineOf(t, "machine-b")
	for _, s := range stale {
		tk, err := f.st.TaskGet(ctx, s.TaskID)
		require.NoError(t, err)
		require.Equal(t, 1, tk.Attempt, "task %s: the lost machine's attempt is not charged", s.TaskID)
		evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: s.TaskID})
		require.NoError(t, err)
		var takeover *task.Event
		for i := range evs {
			if evs[i].Reason == task.ReasonLeaseOrphaned && strings.Contains(evs[i].Text, "machine is taken as lost") {
				takeover = &evs[i]
			}
		}
		require.NotNil(t, takeover, "task %s: no takeover event", s.TaskID)
		require.Contains(t, takeover.Text, "is not counted")
		m := lostAge.FindStringSubmatch(takeover.Text)
		require.NotNil(t, m, takeover.Text)
		age, err := time.ParseDuration(m[1])
		require.NoError(t, err)
		t.Logf("task %s taken over %s after machine-a's last heartbeat (TTL %s, tick %s)", s.TaskID, age, fleetTTL, fleetTick)
		// The rescue runs every tick: a loaded machine may delay a tick,
		// never a whole TTL.
		require.Less(t, age, 2*fleetTTL+fleetTick, "taken over within the TTL plus a tick (with room for a loaded machine)")

		last := sessions[s.TaskID][len(sessions[s.TaskID])-1]
		require.Equal(t, b.ID, last.Holder, "task %s finished on machine-b", s.TaskID)
		require.Contains(t, last.Brief, task.HeadingContinuity, "the takeover session got a continuity brief")
		require.Contains(t, last.Brief, "Its engine was lost", "the continuity says the machine was lost")

		// A write replayed with the dead engine's token changes nothing.
		old := leases[s.TaskID]
		err = f.st.LeaseUpdate(ctx, store.LeaseUpdateParams{Lease: leaseWith(s.TaskID, a.ID, old)})
		require.ErrorIs(t, err, store.ErrStaleToken)
		replay := tk
		replay.State = task.StateQueued
		err = f.st.TaskUpdate(ctx, store.TaskUpdateParams{Task: replay, ExpectState: task.StateAwaitingReview, ExpectToken: old})
		require.ErrorIs(t, err, store.ErrStaleToken)
		_, err = f.st.ArtifactSeal(ctx, store.ArtifactSealParams{TaskID: s.TaskID, Token: old, Phase: task.PhaseImplement,
			Content: []byte(`{}`), SessionID: s.ID, At: time.Now()})
		require.ErrorIs(t, err, store.ErrStaleToken)
		after, err := f.st.TaskGet(ctx, s.TaskID)
		require.NoError(t, err)
		require.Equal(t, tk, after, "the refused writes changed nothing")
	}
}

// leaseWith is a lease as the engine that held it would write it back.
func leaseWith(id task.ID, holder string, token int64) lease.Lease {
	now := time.Now()
	return lease.Lease{TaskID: id, Holder: holder, Token: token, GrantedAt: now, Deadline: now.Add(time.Hour),
		Baseline: lease.Progress{At: now}, LastProgressAt: now}
}
