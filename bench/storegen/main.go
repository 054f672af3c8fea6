// Command storegen writes a big store for the scale benchmarks: a git
// repository with an orchestra store holding N tasks and M ledger events,
// spread as a long-running project's would be (bench/scale.sh runs it).
//
//	go run ./bench/storegen -dir /tmp/big -tasks 10000 -events 1000000
//
// Every task has ended (completed, failed or cancelled) or is parked, so a
// console opened on the store starts no session: what is measured is the
// cost of what exists. Each task has two sessions, two verdicts and, per
// session, one session.usage event; the rest of its events are the lease
// renewals and screen-progress notes a real run accumulates.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

func main() {
	dir := flag.String("dir", "", "directory to create the repository in (must not exist)")
	tasks := flag.Int("tasks", 10000, "tasks to write")
	events := flag.Int("events", 1000000, "ledger events to write in all")
	flag.Parse()
	if *dir == "" || *tasks < 1 || *events < *tasks*8 {
		fmt.Fprintln(os.Stderr, "usage: storegen -dir DIR [-tasks N] [-events M], with M at least 8 per task")
		os.Exit(2)
	}
	if err := run(*dir, *tasks, *events); err != nil {
		fmt.Fprintln(os.Stderr, "storegen:", err)
		os.Exit(1)
	}
}

func run(dir string, nTasks, nEvents int) error {
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("%s exists; give a new directory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("scale benchmark\n"), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "add", "README"},
		{"-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-q", "-m", "start"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v: %s", args, err, out)
		}
	}
	st, err := sqlite.Open(sqlite.DefaultPath(dir))
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := context.Background()
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	perTask := nEvents / nTasks
	extra := nEvents - perTask*nTasks
	ended := []task.State{task.StateCompleted, task.StateFailed, task.StateCancelled, task.StateParked}
	var batch []task.Event
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := st.EventAppend(ctx, batch...)
		batch = batch[:0]
		return err
	}
	for i := range nTasks {
		at := start.Add(time.Duration(i) * time.Minute)
		t := task.Task{
			ID: task.NewID(at), Title: fmt.Sprintf("task %05d: fix the flaky test in pkg%03d", i, i%500),
			Goal: "Make the test pass reliably.", Acceptance: []string{"go test ./... passes 20 times in a row"},
			Verify: "go test ./...", Repo: dir, Pipeline: task.DefaultPipeline(), Harness: "claude", Model: "claude-sonnet-4-5",
			State: ended[i%len(ended)], Phase: task.PhaseReview, Attempt: 1 + i%3, CreatedAt: at, UpdatedAt: at.Add(40 * time.Minute),
		}
		if err := st.TaskInsert(ctx, t, task.Event{ID: task.NewULID(at), TaskID: t.ID, Kind: task.EvTaskAdded, Text: "Task added: " + t.Title, At: at}); err != nil {
			return err
		}
		n := perTask - 1
		if i < extra {
			n++
		}
		for s := range 2 {
			sat := at.Add(time.Duration(1+s*20) * time.Minute)
			sess := store.Session{
				ID: task.NewULID(sat), TaskID: t.ID, Phase: task.PhaseImplement, Attempt: s + 1, Harness: "claude",
				Model: "claude-sonnet-4-5", Token: int64(s + 1), Holder: "console:1:bench", Status: store.SessionExited,
				Brief: "# Goal\nMake the test pass reliably.\n", StartedAt: sat, EndedAt: sat.Add(15 * time.Minute),
			}
			if err := st.SessionInsert(ctx, sess); err != nil {
				return err
			}
			v := verify.Verdict{Status: verify.StatusOK, Command: t.Verify, Passed: 12, Counted: true, At: sat.Add(16 * time.Minute)}
			if s == 0 {
				v.Status, v.Passed, v.Failed = verify.StatusIncomplete, 10, 2
			}
			if err := st.VerdictInsert(ctx, store.VerdictRecord{TaskID: t.ID, SessionID: sess.ID, Phase: task.PhaseImplement, Verdict: v}); err != nil {
				return err
			}
			tot := usage.Totals{Models: map[string]usage.ModelTotals{"claude-sonnet-4-5": {
				Tokens: usage.Tokens{Input: 12000, Output: 3400, CacheCreation: 800, CacheRead: 90000}, CostUSD: 0.0912, Priced: true,
			}}}
			data, _ := json.Marshal(map[string]any{"session_id": sess.ID, "phase": task.PhaseImplement, "totals": tot})
			batch = append(batch, task.Event{ID: task.NewULID(sat), TaskID: t.ID, SessionID: sess.ID, Kind: task.EvUsage,
				Text: "Session used " + tot.String() + ".", Data: data, At: sat.Add(15 * time.Minute)})
			n--
		}
		for e := range n {
			eat := at.Add(time.Duration(e) * time.Second)
			batch = append(batch, task.Event{ID: task.NewULID(eat), TaskID: t.ID, Kind: task.EvLeaseRenewed,
				Text: fmt.Sprintf("Lease renewed (%d): the pane made progress.", e+1), At: eat})
		}
		if len(batch) >= 5000 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}
