package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/postgres/pgtest"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// The randomized fault run: three engines on one real PostgreSQL, each
// reaching it through a Toxiproxy of its own (in process), 30 tasks, and a
// seeded random schedule of faults of every kind below, one after another,
// with tasks added along the way so that work is in flight throughout. At
// the end a checker reads the store's ledger (see faultLedgerCheck).
//
// ORCHESTRA_FAULT_SEED replays a schedule (the run prints its seed; the
// engines' timing still differs from run to run), ORCHESTRA_FAULT_COUNT
// sets the faults of each kind (10 by default; bench/faults.sh runs more).

// faultKind is one kind of fault the run injects.
type faultKind string

const (
	faultLatency   faultKind = "latency"    // toxiproxy: latency on one engine's database connections
	faultTimeout   faultKind = "timeout"    // toxiproxy: no data through, connections closed after a while
	faultReset     faultKind = "reset_peer" // toxiproxy: connections reset (TCP RST)
	faultBandwidth faultKind = "bandwidth"  // toxiproxy: a few KB/s
	faultPGRestart faultKind = "pg_restart" // pg_ctl restart -m fast
	faultStop      faultKind = "sigstop"    // SIGSTOP of an engine past its TTL, then SIGCONT
	faultKillEng   faultKind = "kill_engine"
	faultKillHost  faultKind = "kill_host" // SIGKILL of a live session's host
)

var faultKinds = []faultKind{faultLatency, faultTimeout, faultReset, faultBandwidth,
	faultPGRestart, faultStop, faultKillEng, faultKillHost}

// faultRun is the state of one randomized run.
type faultRun struct {
	t       *testing.T
	f       *fleet
	cluster *pgtest.Cluster
	rng     *rand.Rand
	hosts   []string
	proxies map[string]*toxiproxy.Proxy
	// done counts the faults injected, by kind.
	done map[faultKind]int
	log  []string
	t0   time.Time
}

// newFaultProxy starts an in-process Toxiproxy from a free port on
// 127.0.0.1 to upstream.
func newFaultProxy(t *testing.T, name, upstream string) *toxiproxy.Proxy {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, name, "127.0.0.1:0", upstream)
	require.NoError(t, p.Start())
	t.Cleanup(p.Stop)
	return p
}

// viaProxy is the store URL dbURL (a pgtest database) reached at addr
// instead of the server's socket.
func viaProxy(t *testing.T, dbURL, addr string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	q := u.Query()
	q.Del("host")
	q.Del("port")
	q.Set("sslmode", "disable") // 127.0.0.1, said explicitly
	u.RawQuery = q.Encode()
	u.Host = addr
	return u.String()
}

// faultEnvInt reads a positive integer from the environment, or def.
func faultEnvInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "%s", name)
	require.Positive(t, n, "%s", name)
	return n
}

// TestFleetRandomFaults is the short randomized fault run (10 faults of
// each of the eight kinds over three engines and 30 tasks, about three
// minutes), part of the suite: a fresh seed each run, logged first, so a
// failure can be replayed with ORCHESTRA_FAULT_SEED. bench/faults.sh runs
// the long one (ORCHESTRA_FAULT_COUNT=25: 200 faults).
func TestFleetRandomFaults(t *testing.T) {
	parallel(t)
	perKind := faultEnvInt(t, "ORCHESTRA_FAULT_COUNT", 10)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ORCHESTRA_FAULT_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "ORCHESTRA_FAULT_SEED")
		seed = v
	}
	t.Logf("fault schedule seed %d (replay with ORCHESTRA_FAULT_SEED=%d), %d faults of each of %d kinds", seed, seed, perKind, len(faultKinds))

	cluster := pgtest.Start(t, pgtest.TCP())
	if cluster.TCPAddr() == "" {
		t.Skip("the fault run needs a PostgreSQL it starts itself (ORCHESTRA_TEST_PG_URL is set)")
	}
	const nTasks = 30
	pace := 40
	hosts := []string{"machine-a", "machine-b", "machine-c"}
	db := cluster.NewDatabase(t)
	// Every agent logs each file it writes here (agent.WritesLogName):
	// its own account of when it worked, for the checker.
	records := t.TempDir()
	f := newFleetOn(t, db, hosts, 2, agent.Script{PaceMS: &pace, RecordDir: records, Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}})
	r := &faultRun{t: t, f: f, cluster: cluster, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		hosts: hosts, proxies: map[string]*toxiproxy.Proxy{}, done: map[faultKind]int{}, t0: time.Now()}
	for _, h := range hosts {
		p := newFaultProxy(t, h, cluster.TCPAddr())
		r.proxies[h] = p
		f.engines[h].env = []string{coord.StoreURLEnv + "=" + viaProxy(t, db, p.Listen)}
		f.start(t, h)
	}

	// The schedule: perKind faults of each kind in a seeded random order;
	// the tasks are added along its first three quarters, six at once to
	// fill the slots, so that faults meet work in flight.
	var schedule []faultKind
	for _, k := range faultKinds {
		for range perKind {
			schedule = append(schedule, k)
		}
	}
	r.rng.Shuffle(len(schedule), func(i, j int) { schedule[i], schedule[j] = schedule[j], schedule[i] })
	ids := f.add(t, hosts[0], 6)
	addAt := map[int]int{} // fault index -> tasks to add before it
	for k := range nTasks - 6 {
		addAt[(k+1)*len(schedule)*3/4/(nTasks-6)]++
	}
	skipped := 0
	for i := 0; i < len(schedule); i++ {
		if n := addAt[i]; n > 0 {
			ids = append(ids, f.add(t, hosts[r.rng.IntN(len(hosts))], n)...)
		}
		k := schedule[i]
		if !r.inject(k) {
			// No live session to take a host from (the fleet finished
			// every task so far): add one, and try the kind again later
			// in the schedule, a bounded number of times.
			skipped++
			require.Less(t, skipped, 4*perKind, "no live session for a host kill, %d times", skipped)
			ids = append(ids, f.add(t, hosts[r.rng.IntN(len(hosts))], 1)...)
			schedule = append(schedule, k)
			continue
		}
		r.done[k]++
		// A pause between faults, then every engine is back and beating
		// before the next one (an engine's heartbeat advanced since).
		r.pause(time.Duration(100+r.rng.IntN(400)) * time.Millisecond)
		r.settle()
	}
	r.note("schedule done: %v", r.done)
	for _, k := range faultKinds {
		require.GreaterOrEqual(t, r.done[k], perKind, "faults of kind %s", k)
	}

	// Every task ends; the checker says what is wrong if one does not.
	r.waitFor(6*time.Minute, "every task green and waiting for review", func() bool {
		for _, id := range ids {
			tk, err := f.st.TaskGet(context.Background(), id)
			if err != nil || (tk.State != task.StateAwaitingReview && tk.State != task.StateFailed) {
				return false
			}
		}
		return true
	}, false)
	writes, err := agent.ReadWriteLog(records)
	require.NoError(t, err)
	rep := faultLedgerCheck(t, f, ids, writes)
	t.Logf("after %d faults in %s (%v): %s", len(schedule)-skipped, time.Since(r.t0).Round(time.Second), r.done, rep.summary())
	if len(rep.worked) > 0 {
		t.Logf("KNOWN OPEN (issue 23): agents wrote after the ledger's end of their sessions:\n%s\n%s", strings.Join(rep.worked, "\n"), strings.Join(rep.timelines, ""))
	}
	if !rep.ok(os.Getenv("ORCHESTRA_FAULT_STRICT_AGENTS") != "") {
		t.Fatalf("the checker found faults that broke the fleet:\n%s\nschedule:\n%s\n%s", rep, strings.Join(r.log, "\n"), f.logs())
	}
}

// note logs one step of the run, with the time since it began.
func (r *faultRun) note(format string, args ...any) {
	line := fmt.Sprintf("%7s ", time.Since(r.t0).Round(10*time.Millisecond)) + fmt.Sprintf(format, args...)
	r.log = append(r.log, line)
	r.t.Log(line)
}

// pause holds a fault for d: the fault's own length, nothing to wait on.
func (r *faultRun) pause(d time.Duration) { time.Sleep(d) }

// inject injects one fault of kind k and returns once it is over (its
// toxic removed, the server back, the engine resumed or restarted). It
// returns false when the fault found nothing to act on.
func (r *faultRun) inject(k faultKind) bool {
	t := r.t
	host := r.hosts[r.rng.IntN(len(r.hosts))]
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+r.rng.IntN(hi-lo+1)) * time.Millisecond }
	toxic := func(typ, stream string, attrs map[string]any, hold time.Duration) {
		p := r.proxies[host]
		body, err := json.Marshal(map[string]any{"name": typ, "type": typ, "stream": stream, "toxicity": 1.0, "attributes": attrs})
		require.NoError(t, err)
		_, err = p.Toxics.AddToxicJson(strings.NewReader(string(body)))
		require.NoError(t, err)
		r.note("%s on %s (%s, %v) for %s", typ, host, stream, attrs, hold)
		r.pause(hold)
		require.NoError(t, p.Toxics.RemoveToxic(context.Background(), typ))
	}
	ttl := fleetTTL
	switch k {
	case faultLatency:
		l := ms(50, 600)
		toxic("latency", []string{"upstream", "downstream"}[r.rng.IntN(2)],
			map[string]any{"latency": l.Milliseconds(), "jitter": l.Milliseconds() / 4}, ms(500, 2500))
	case faultTimeout:
		// A partition of one engine: nothing passes, connections close
		// after the toxic's timeout (or hang while it lasts, with 0).
		hold := ms(300, 2500)
		toxic("timeout", "upstream", map[string]any{"timeout": []int64{0, hold.Milliseconds() / 2}[r.rng.IntN(2)]}, hold)
	case faultReset:
		toxic("reset_peer", []string{"upstream", "downstream"}[r.rng.IntN(2)],
			map[string]any{"timeout": ms(0, 300).Milliseconds()}, ms(200, 1200))
	case faultBandwidth:
		toxic("bandwidth", "downstream", map[string]any{"rate": 1 + r.rng.IntN(16)}, ms(500, 2500))
	case faultPGRestart:
		began := time.Now()
		r.cluster.Restart(t)
		r.note("pg_ctl restart -m fast took %s", time.Since(began).Round(time.Millisecond))
	case faultStop:
		e := r.f.engines[host]
		hold := ttl + ms(int(ttl.Milliseconds()/2), int(2*ttl.Milliseconds()))
		require.NoError(t, syscall.Kill(e.cmd.Process.Pid, syscall.SIGSTOP))
		r.note("SIGSTOP engine %s for %s", host, hold)
		r.pause(hold)
		require.NoError(t, syscall.Kill(e.cmd.Process.Pid, syscall.SIGCONT))
	case faultKillEng:
		r.killEngine(host)
	case faultKillHost:
		return r.killHost()
	}
	return true
}

// killEngine kills host's engine with SIGKILL (its session hosts live on)
// and starts a new one there at once, on the same log.
func (r *faultRun) killEngine(host string) {
	t := r.t
	e := r.f.engines[host]
	old := r.f.engineOf(t, host).ID
	require.NoError(t, e.cmd.Process.Signal(syscall.SIGKILL))
	<-e.done
	cmd := exec.Command(r.f.bin, "engine", "--foreground", "-C", e.dir)
	cmd.Env = append(r.f.env(), e.env...)
	cmd.Stdout, cmd.Stderr = e.log, e.log
	fmt.Fprintf(e.log, "--- the fault run killed this engine (SIGKILL) and starts another\n")
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	e.cmd, e.done = cmd, done
	r.note("SIGKILL engine %s (%s), restarted as pid %d", host, old, cmd.Process.Pid)
	r.waitFor(time.Minute, host+"'s new engine beats", func() bool {
		es, err := r.f.st.EngineList(context.Background())
		if err != nil {
			return false
		}
		for _, x := range es {
			if x.Host == host && x.ID != old && x.Pid == cmd.Process.Pid && x.StoppedAt.IsZero() {
				return true
			}
		}
		return false
	}, true)
}

// killHost kills one live session's host (SIGKILL), chosen at random; it
// waits a while for a session to be live and returns false if none is.
func (r *faultRun) killHost() bool {
	ctx := context.Background()
	var pid int
	var which string
	found := r.waitFor(20*time.Second, "a live session", func() bool {
		evs, err := r.f.st.EventList(ctx, store.EventListParams{})
		if err != nil {
			return false
		}
		var cands []task.Event
		for _, ev := range evs {
			if ev.Kind != task.EvSessionLaunched {
				continue
			}
			s, err := r.f.st.SessionGet(ctx, ev.SessionID)
			if err == nil && s.Status == store.SessionConfirmed && s.EndedAt.IsZero() {
				cands = append(cands, ev)
			}
		}
		if len(cands) == 0 {
			return false
		}
		ev := cands[r.rng.IntN(len(cands))]
		var d coord.LaunchedData
		if json.Unmarshal(ev.Data, &d) != nil || d.HostPid <= 1 {
			return false
		}
		pid, which = d.HostPid, fmt.Sprintf("session %s of task %s", ev.SessionID, ev.TaskID)
		return true
	}, false)
	if !found {
		r.note("no live session to take a host from")
		return false
	}
	err := syscall.Kill(pid, syscall.SIGKILL)
	r.note("SIGKILL session host %d (%s): %v", pid, which, err)
	return err == nil
}

// settle waits until every engine's heartbeat advanced after the fault:
// each is running and reaches the store again.
func (r *faultRun) settle() {
	ctx := context.Background()
	before := map[string]time.Time{}
	es, _ := r.f.st.EngineList(ctx) // the test's own connection may be coming back
	for _, e := range es {
		before[e.ID] = e.HeartbeatAt
	}
	for _, h := range r.hosts {
		r.waitFor(2*time.Minute, h+"'s engine beats again", func() bool {
			e := r.f.engineOf(r.t, h)
			b, seen := before[e.ID]
			return e.ID != "" && (!seen || e.HeartbeatAt.After(b))
		}, true)
	}
}

// waitFor waits until ok holds, looking again on every change the store
// signals and at least every quarter second (the test's own listener is
// cut by a database restart too). On timeout it fails the test when fatal
// is set, else returns false.
func (r *faultRun) waitFor(d time.Duration, what string, ok func() bool, fatal bool) bool {
	r.t.Helper()
	timeout := time.After(d)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	changes := r.f.changes
	for {
		if ok() {
			return true
		}
		select {
		case _, open := <-changes:
			if !open {
				changes = nil
			}
		case <-tick.C:
		case <-timeout:
			if fatal {
				r.t.Fatalf("%s: not within %s\nschedule:\n%s\n%s", what, d, strings.Join(r.log, "\n"), r.f.logs())
			}
			return false
		}
	}
}

// faultReport is what the checker found in the ledger.
type faultReport struct {
	tasks    int
	sessions int
	// takeovers counts the tasks taken over from another engine;
	// stranded the leases an engine found it held with nothing behind
	// them (a claim whose answer was lost), requeued by its strand check.
	takeovers, stranded int
	overlaps            []string // two live sessions of one task at once
	// worked lists an agent's write (its own log) after the ledger's end
	// of its session: an agent at work while the ledger, and so the
	// overlap check, took it for ended.
	worked   []string
	writes   int      // the agents' writes checked
	stale    []string // a write of a session whose lease was gone landed
	lost     []string // a task that did not end
	charged  []string // a task charged an attempt (the agent never fails)
	notGreen []string // ended but not green, or its branch not on the remote
	// timelines are the ledgers of the tasks a finding names, so that
	// one run's failure can be read without replaying it.
	timelines []string
}

// ok reports whether the checker found nothing wrong. An agent's write
// after its session's end counts only when strict is set (bench/faults.sh
// sets ORCHESTRA_FAULT_STRICT_AGENTS): a known open defect of issue 23,
// about one short run in seven, which the suite reports without failing
// on. A start-up's store check of another engine, seeing the holder's
// heartbeat not yet fresh, marks a session killed 112 ms after its row
// was written, fenced by the session's own token so it lands, while the
// task stays leased and its engine runs the agent on until the task is
// requeued (ci12).
func (p faultReport) ok(strict bool) bool {
	worked := 0
	if strict {
		worked = len(p.worked)
	}
	return len(p.overlaps)+worked+len(p.stale)+len(p.lost)+len(p.charged)+len(p.notGreen) == 0
}

func (p faultReport) summary() string {
	return fmt.Sprintf("%d tasks, %d sessions, %d takeovers, %d stranded leases requeued, %d agent writes; %d overlapping sessions, %d agent writes after their session ended, %d stale writes landed, %d lost tasks, %d charged attempts, %d not green",
		p.tasks, p.sessions, p.takeovers, p.stranded, p.writes, len(p.overlaps), len(p.worked), len(p.stale), len(p.lost), len(p.charged), len(p.notGreen))
}

func (p faultReport) String() string {
	var b strings.Builder
	b.WriteString(p.summary() + "\n")
	for _, s := range [][]string{p.overlaps, p.worked, p.stale, p.lost, p.charged, p.notGreen} {
		for _, l := range s {
			b.WriteString("  " + l + "\n")
		}
	}
	for _, l := range p.timelines {
		b.WriteString(l)
	}
	return b.String()
}

// faultLedgerCheck reads the store's ledger after a fault run:
//
//   - no two sessions of a task overlap (by their start and end in the
//     ledger), and every session ended;
//   - no agent worked after the ledger's end of its session (by the
//     agents' own logs of the files they wrote, writes): the ledger's
//     account of when a session ended is what the overlap check trusts;
//   - no write of a fenced-out session landed: no event (but the refusal
//     of its write and the record of its end: fencedAccount), verdict or
//     sealed artifact of a session after a later session of its task,
//     under another lease token, began; and the task branch's tip on the
//     remote is the last session's push;
//   - no task is lost (each ended), none was charged an attempt (the
//     scripted agent never fails, so every attempt past the first is a
//     fault's), and every task is green with its fix on the remote.
func faultLedgerCheck(t *testing.T, f *fleet, ids []task.ID, writes []agent.WriteRecord) (rep faultReport) {
	t.Helper()
	ctx := context.Background()
	rep = faultReport{tasks: len(ids), writes: len(writes)}
	bySession := map[string][]agent.WriteRecord{}
	for _, w := range writes {
		bySession[w.Session] = append(bySession[w.Session], w)
	}
	// Each task a finding names has its ledger printed after the list.
	findings := func() int { return len(rep.overlaps) + len(rep.worked) + len(rep.stale) }
	prev, before := task.ID(""), 0
	timeline := func() {
		if prev != "" && findings() > before {
			rep.timelines = append(rep.timelines, faultTimeline(ctx, t, f, prev))
		}
	}
	defer timeline() // the last task's, into the named result
	for _, id := range ids {
		timeline()
		prev, before = id, findings()
		tk, err := f.st.TaskGet(ctx, id)
		require.NoError(t, err)
		if tk.State != task.StateAwaitingReview {
			rep.lost = append(rep.lost, fmt.Sprintf("task %s is %s: %s%s", id, tk.State, tk.Reason, faultWhyLost(ctx, t, f, id)))
			continue
		}
		if tk.Attempt != 1 {
			rep.charged = append(rep.charged, fmt.Sprintf("task %s ended at attempt %d%s", id, tk.Attempt, faultWhyCharged(ctx, t, f, id)))
		}
		ss, err := f.st.SessionList(ctx, id)
		require.NoError(t, err)
		rep.sessions += len(ss)
		slices.SortFunc(ss, func(a, b store.Session) int { return a.StartedAt.Compare(b.StartedAt) })
		for i, s := range ss {
			if s.EndedAt.IsZero() {
				rep.overlaps = append(rep.overlaps, fmt.Sprintf("task %s: session %s (%s) never ended", id, s.ID, s.Holder))
			}
			for _, w := range bySession[s.ID] {
				// The ledger keeps microseconds; the agent's stamp is
				// taken after its write returned.
				if !s.EndedAt.IsZero() && w.At.Truncate(time.Microsecond).After(s.EndedAt) {
					rep.worked = append(rep.worked, fmt.Sprintf("task %s: session %s (%s, token %d) wrote %s at %s, after its end at %s (%s)",
						id, s.ID, s.Holder, s.Token, w.Path, w.At.Format(time.StampMicro), s.EndedAt.Format(time.StampMicro), s.Status))
				}
			}
			if i > 0 && ss[i-1].EndedAt.After(s.StartedAt) {
				prev := ss[i-1]
				rep.overlaps = append(rep.overlaps, fmt.Sprintf("task %s: session %s (%s, token %d, %s to %s) overlaps session %s (%s, token %d, from %s)",
					id, prev.ID, prev.Holder, prev.Token, prev.StartedAt.Format(time.StampMicro), prev.EndedAt.Format(time.StampMicro),
					s.ID, s.Holder, s.Token, s.StartedAt.Format(time.StampMicro)))
			}
		}
		// supersededAt is when a session of another token took over from
		// s: the start of the first later session with a newer token.
		supersededAt := func(sid string) (time.Time, bool) {
			for i, s := range ss {
				if s.ID != sid {
					continue
				}
				for _, n := range ss[i+1:] {
					if n.Token > s.Token {
						return n.StartedAt, true
					}
				}
			}
			return time.Time{}, false
		}
		evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: id})
		require.NoError(t, err)
		for _, ev := range evs {
			if ev.Kind == task.EvRefusal && ev.Reason == task.ReasonLeaseOrphaned {
				rep.takeovers++
			}
			if ev.Kind == task.EvTaskRequeued && ev.Reason == task.ReasonLeaseOrphaned {
				rep.stranded++
			}
			if ev.SessionID == "" || faultRescueKind(ev) || fencedAccount(ev) {
				continue
			}
			if at, ok := supersededAt(ev.SessionID); ok && ev.At.After(at) {
				rep.stale = append(rep.stale, fmt.Sprintf("task %s: event %s %s of session %s at %s, after a newer session began at %s: %s",
					id, ev.Kind, ev.Reason, ev.SessionID, ev.At.Format(time.StampMicro), at.Format(time.StampMicro), ev.Text))
			}
		}
		vs, err := f.st.VerdictList(ctx, id)
		require.NoError(t, err)
		for _, v := range vs {
			if at, ok := supersededAt(v.SessionID); ok && v.Verdict.At.After(at) {
				rep.stale = append(rep.stale, fmt.Sprintf("task %s: verdict %s of session %s at %s, after a newer session began at %s",
					id, v.Verdict.Status, v.SessionID, v.Verdict.At.Format(time.StampMicro), at.Format(time.StampMicro)))
			}
		}
		as, err := f.st.ArtifactList(ctx, id)
		require.NoError(t, err)
		for _, a := range as {
			if at, ok := supersededAt(a.Session); ok && a.At.After(at) {
				rep.stale = append(rep.stale, fmt.Sprintf("task %s: artifact %s of session %s sealed at %s, after a newer session began at %s",
					id, a.Phase, a.Session, a.At.Format(time.StampMicro), at.Format(time.StampMicro)))
			}
		}
		green := len(vs) > 0 && vs[len(vs)-1].Verdict.Status == verify.StatusOK
		calc, err := exec.Command("git", "--git-dir", f.remote, "show", tk.Branch+":calc.go").CombinedOutput()
		if !green || err != nil || string(calc) != project.CalcFixed {
			rep.notGreen = append(rep.notGreen, fmt.Sprintf("task %s: green %v, remote branch %s: %v %.80q", id, green, tk.Branch, err, calc))
			continue
		}
		out, err := exec.Command("git", "--git-dir", f.remote, "rev-parse", "refs/heads/"+tk.Branch).Output()
		require.NoError(t, err)
		tip := repo.Abbrev(strings.TrimSpace(string(out)))
		pushedBy := ""
		for _, ev := range evs {
			if ev.Kind == task.EvBranchPushed && strings.Contains(ev.Text, tip) {
				pushedBy = ev.SessionID
			}
		}
		if len(ss) > 0 && pushedBy != ss[len(ss)-1].ID {
			rep.stale = append(rep.stale, fmt.Sprintf("task %s: the remote branch's tip %s was pushed by session %q, not by the last session %s",
				id, tip, pushedBy, ss[len(ss)-1].ID))
		}
	}
	return rep
}

// faultTimeline is task id's ledger (its sessions, then its events, each
// with its time, session and lease holder's token) and its remote branch's
// commits, for a finding's report.
func faultTimeline(ctx context.Context, t *testing.T, f *fleet, id task.ID) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "  ledger of task %s:\n", id)
	ss, err := f.st.SessionList(ctx, id)
	require.NoError(t, err)
	for _, s := range ss {
		fmt.Fprintf(&b, "    session %s %s token %d %s to %s %s\n", s.ID, s.Holder, s.Token,
			s.StartedAt.Format(time.StampMicro), s.EndedAt.Format(time.StampMicro), s.Status)
	}
	evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: id})
	require.NoError(t, err)
	for _, ev := range evs {
		fmt.Fprintf(&b, "    %s %-20s %-24s %s %.300s\n", ev.At.Format(time.StampMicro), ev.Kind, ev.Reason, ev.SessionID, ev.Text)
	}
	if tk, err := f.st.TaskGet(ctx, id); err == nil && tk.Branch != "" {
		out, _ := exec.Command("git", "--git-dir", f.remote, "log", "--format=%h %ci %s", "-8", "refs/heads/"+tk.Branch).CombinedOutput()
		fmt.Fprintf(&b, "    remote %s:\n", tk.Branch)
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fmt.Fprintf(&b, "      %s\n", l)
		}
	}
	return b.String()
}

// faultRescueKind reports whether ev is written about a session by another
// engine (or the store's rescue) rather than by the session's own engine:
// the takeover's events name the session they end.
func faultRescueKind(ev task.Event) bool {
	return ev.Reason == task.ReasonLeaseOrphaned
}

// fencedAccount tells whether ev is the ledger's account of a fenced-out
// session rather than a write of it: the refusal that says its write was
// refused (store.ErrStaleToken: what fencing is for), or the record of its
// end (without which the session would never have ended). Neither moves
// the task; a stale write that landed is any other event, a verdict, an
// artifact or a push.
func fencedAccount(ev task.Event) bool {
	return (ev.Kind == task.EvRefusal && ev.Reason == task.ReasonStaleLeaseToken) || ev.Kind == task.EvSessionExited
}

// faultWhyCharged lists a charged task's events that can tell why: its
// sessions' exits and its refusals other than the fenced ones, each on its
// own line.
func faultWhyCharged(ctx context.Context, t *testing.T, f *fleet, id task.ID) string {
	t.Helper()
	evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: id})
	require.NoError(t, err)
	var b strings.Builder
	for _, ev := range evs {
		if ev.Kind == task.EvSessionExited || (ev.Kind == task.EvRefusal && ev.Reason != task.ReasonStaleLeaseToken) {
			fmt.Fprintf(&b, "\n            %s %s %s %s: %.300s", ev.At.Format(time.StampMicro), ev.SessionID, ev.Kind, ev.Reason, ev.Text)
		}
	}
	return b.String()
}

// faultWhyLost says what the store holds of a task that did not end, one
// fact a line: its lease (holder, token, deadline against the store's
// clock), every engine the engines table has (alive or not, by the
// store's clock and by the test's own process), its sessions, and its
// last events. A leased task has no reason of its own, so without these
// the checker could not say why nobody acted on it.
func faultWhyLost(ctx context.Context, t *testing.T, f *fleet, id task.ID) string {
	t.Helper()
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, "\n            "+format, args...) }
	var dbNow time.Time
	if conn, err := pgx.Connect(ctx, f.url); err == nil {
		if err := conn.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&dbNow); err != nil {
			line("the store's clock: %v", err)
		}
		_ = conn.Close(ctx)
	} else {
		line("the store's clock: %v", err)
	}
	if dbNow.IsZero() {
		dbNow = time.Now()
	}
	line("the store's now: %s", dbNow.Format(time.StampMicro))
	if token, err := f.st.TaskToken(ctx, id); err == nil {
		line("task token: %d", token)
	}
	if l, err := f.st.LeaseGet(ctx, id); err != nil {
		line("lease: %v", err)
	} else {
		expiry := fmt.Sprintf("expires in %s by the store's clock", l.Deadline.Sub(dbNow).Round(time.Millisecond))
		if !l.Deadline.After(dbNow) {
			expiry = fmt.Sprintf("expired %s ago by the store's clock", dbNow.Sub(l.Deadline).Round(time.Millisecond))
		}
		line("lease: holder %s, token %d, granted %s, deadline %s (%s), %d renewals, last decision %q %s",
			l.Holder, l.Token, l.GrantedAt.Format(time.StampMicro), l.Deadline.Format(time.StampMicro),
			expiry, l.Renewals, l.LastDecision, l.LastReason)
	}
	running := map[int]string{}
	for h, e := range f.engines {
		select {
		case <-e.done:
		default:
			running[e.cmd.Process.Pid] = h
		}
	}
	if es, err := f.st.EngineList(ctx); err != nil {
		line("engines: %v", err)
	} else {
		for _, e := range es {
			proc := "its process is not the test's running engine"
			if h, ok := running[e.Pid]; ok {
				proc = "its process runs (" + h + ")"
			}
			stopped := ""
			if !e.StoppedAt.IsZero() {
				stopped = ", stopped at " + e.StoppedAt.Format(time.StampMicro)
			}
			line("engine %s on %s: last beat %s ago by the store's clock%s; %s",
				e.ID, e.Host, e.HeartbeatAge(dbNow).Round(time.Millisecond), stopped, proc)
		}
	}
	if ss, err := f.st.SessionList(ctx, id); err != nil {
		line("sessions: %v", err)
	} else {
		slices.SortFunc(ss, func(a, b store.Session) int { return a.StartedAt.Compare(b.StartedAt) })
		for _, s := range ss {
			ended := "never ended"
			if !s.EndedAt.IsZero() {
				ended = "ended " + s.EndedAt.Format(time.StampMicro)
			}
			line("session %s: %s, attempt %d, holder %s, token %d, started %s, %s",
				s.ID, s.Status, s.Attempt, s.Holder, s.Token, s.StartedAt.Format(time.StampMicro), ended)
		}
	}
	evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: id})
	if err != nil {
		line("events: %v", err)
		return b.String()
	}
	const last = 15
	if len(evs) > last {
		line("(%d earlier events not shown)", len(evs)-last)
		evs = evs[len(evs)-last:]
	}
	for _, ev := range evs {
		line("%s %s %s %s: %.300s", ev.At.Format(time.StampMicro), ev.SessionID, ev.Kind, ev.Reason, ev.Text)
	}
	return b.String()
}
