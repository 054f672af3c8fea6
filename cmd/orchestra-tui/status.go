package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/headless"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// statusCmd lists tasks with state, phase and verdict, read from the store.
func statusCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("status", "orchestra-tui status [--json] [-C DIR]", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	oneShotGC()
	r, err := repo.Open(*dir)
	if err != nil {
		return fail(stderr, err)
	}
	// status reads the store, not the engine, so it works with a stopped
	// engine; it says so, because nothing the tasks show moves meanwhile.
	warnStopped(r.Root, stderr)
	st, err := openExistingStore(context.Background(), r)
	var none *noStoreError
	if errors.As(err, &none) {
		// Nothing to list, as with an empty store, and said so.
		if *asJSON {
			fmt.Fprintln(stdout, "[]")
			return 0
		}
		fmt.Fprintf(stdout, "no tasks: %v\n", err)
		return 0
	}
	if err != nil {
		return fail(stderr, err)
	}
	defer st.Close()
	ctx := context.Background()
	// One query of a few columns, whatever the ledger's length: the
	// tasks with their latest verdicts, which the store keeps on each
	// task's row.
	ts, err := st.TaskStatusList(ctx)
	if err != nil {
		return fail(stderr, err)
	}
	type row struct {
		ID      string `json:"id"`
		Title   string `json:"title"`
		State   string `json:"state"`
		Phase   string `json:"phase"`
		Attempt int    `json:"attempt"`
		Verdict string `json:"verdict"`
		Reason  string `json:"reason,omitempty"`
		// Host is the machine whose engine runs a live task, when
		// engines share the store.
		Host string `json:"host,omitempty"`
		// PR is the open pull request of a task in pr-open.
		PR *task.PullData `json:"pr,omitempty"`
		// Usage is what the task's sessions recorded spending.
		Usage *statusUsage `json:"usage,omitempty"`
		// Waiting is why a queued task waits, as the running engine
		// says it: the console's flag (coord.AttentionAt).
		Waiting string `json:"waiting,omitempty"`
	}
	hosts, shared, err := taskHosts(ctx, st)
	if err != nil {
		return fail(stderr, err)
	}
	spent, err := statusSpend(ctx, st)
	if err != nil {
		return fail(stderr, err)
	}
	waits, werr := waitReasons(ctx, r.Root, ts)
	var hung *engine.HungError
	if werr != nil && !errors.Is(werr, errNoEngine) && !errors.As(werr, &hung) { // warnStopped said it
		fmt.Fprintf(stderr, "note: the engine did not say why queued tasks wait: %v\n", werr)
	}
	var rows []row
	for _, t := range ts {
		v := "·"
		if t.Verdict != nil {
			v = coord.VerdictText(t.State, *t.Verdict)
		}
		host := ""
		if t.State.Live() {
			host = hosts[t.ID]
		}
		rows = append(rows, row{string(t.ID), t.Title, string(t.State), string(t.Phase), t.Attempt, v, t.Reason, host, nil, spent[t.ID], waits[t.ID]})
		if t.State == task.StatePullOpen {
			// Few tasks wait on a pull request: one ledger read each.
			if rows[len(rows)-1].PR, err = coord.ReadPull(ctx, st, t.ID); err != nil {
				return fail(stderr, err)
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if rows == nil {
			rows = []row{}
		}
		if err := enc.Encode(rows); err != nil {
			return fail(stderr, err)
		}
		return 0
	}
	if len(rows) == 0 {
		fmt.Fprintln(stdout, "no tasks: add one with `orchestra-tui add`")
		return 0
	}
	// tabwriter writes cell by cell: buffered, thousands of tasks are a
	// few writes instead of one system call per cell.
	bw := bufio.NewWriterSize(stdout, 64<<10)
	tw := tabwriter.NewWriter(bw, 0, 4, 2, ' ', 0)
	if shared {
		fmt.Fprintln(tw, "ID\tTITLE\tSTATE\tHOST\tPHASE\tATTEMPT\tVERDICT")
	} else {
		fmt.Fprintln(tw, "ID\tTITLE\tSTATE\tPHASE\tATTEMPT\tVERDICT")
	}
	for _, r := range rows {
		// Titles and verdicts hold text the operator did not type here
		// (a task file, an agent's output): never raw to the terminal.
		state := r.State
		if l := coord.PullLabel(r.PR); l != "" {
			state += " " + l
		}
		if shared {
			host := r.Host
			if host == "" {
				host = "-"
			}
			state += "\t" + headless.Printable(host)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, headless.Printable(r.Title), state, headless.Printable(r.Phase), r.Attempt, headless.Printable(r.Verdict))
	}
	if err := tw.Flush(); err != nil {
		return fail(stderr, err)
	}
	// Why each queued task waits, below the table: the sentences are
	// long, and a column of them would push the verdicts off the screen.
	queued := 0
	for _, r := range rows {
		if r.State == string(task.StateQueued) {
			queued++
		}
		if r.Waiting != "" {
			fmt.Fprintf(bw, "%s ⚑ %s\n", task.ID(r.ID).Short(), headless.Printable(r.Waiting))
		}
	}
	if queued > 0 && errors.Is(werr, errNoEngine) {
		what := "the queued tasks wait"
		if queued == 1 {
			what = "the queued task waits"
		}
		fmt.Fprintf(bw, "%s for an engine, and none runs here: `orchestra-tui` starts one\n", what)
	}
	if err := bw.Flush(); err != nil {
		return fail(stderr, err)
	}
	return 0
}

// statusAsk bounds how long `status` waits for the engine's answer to why
// queued tasks wait; past it, it lists the store's rows without it.
const statusAsk = 5 * time.Second

// waitReasons is why each queued task of ts waits, from the running
// engine's snapshot: the same words as the console's flag, which only the
// engine knows (a limit's reset, a program missing, no slot that can run
// it). errNoEngine when none runs; nothing is asked when nothing is queued.
func waitReasons(ctx context.Context, root string, ts []store.TaskStatus) (map[task.ID]string, error) {
	if !slices.ContainsFunc(ts, func(t store.TaskStatus) bool { return t.State == task.StateQueued }) {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, statusAsk)
	defer cancel()
	cl, err := dialEngine(ctx, root, false, "cli")
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	snap, err := cl.FetchSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	out := map[task.ID]string{}
	for _, tv := range snap.Tasks {
		if tv.Task.State != task.StateQueued {
			continue
		}
		if why := coord.AttentionAt(tv, snap.At); why != "" {
			out[tv.Task.ID] = why
		}
	}
	return out, nil
}

// taskHosts maps each leased task to the machine of the engine holding it,
// on a store engines share (PostgreSQL); shared is false, and the map
// empty, on a store of one machine.
func taskHosts(ctx context.Context, st store.Store) (map[task.ID]string, bool, error) {
	if sh, ok := st.(interface{ Shared() bool }); !ok || !sh.Shared() {
		return nil, false, nil
	}
	leases, err := st.LeaseList(ctx)
	if err != nil {
		return nil, true, err
	}
	es, err := st.EngineList(ctx)
	if err != nil {
		return nil, true, err
	}
	host := map[string]string{}
	for _, e := range es {
		host[e.ID] = e.Host
	}
	out := map[task.ID]string{}
	for _, l := range leases {
		if h, ok := host[l.Holder]; ok {
			out[l.TaskID] = h
		} else {
			out[l.TaskID] = l.Holder
		}
	}
	return out, true, nil
}

// warnStopped says on stderr (so --json stays JSON) when the repository's
// engine is stopped (SIGSTOP) and answers nothing.
func warnStopped(root string, stderr io.Writer) {
	if pid := engine.StoppedHolder(engine.PathsFor(root)); pid > 0 {
		fmt.Fprintf(stderr, "note: %v\n", &engine.HungError{Pid: pid, Stopped: true})
	}
}

// oneShotGC turns the collector off up to a memory limit for a command
// that reads the whole store once and exits: with ten thousand tasks the
// collector took about a third of `status`'s CPU (0.29 s of CPU, 0.21 s
// without it, 72 MB at the peak), and on a busy machine each CPU second is
// several of wall time. A GOGC or GOMEMLIMIT the operator set is kept.
func oneShotGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(512 << 20)
	debug.SetGCPercent(-1)
}
