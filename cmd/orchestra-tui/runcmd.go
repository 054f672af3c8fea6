package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/headless"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// runCmd runs the repository's tasks, headless or in the console.
func runCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run", "orchestra-tui run [--headless [--json] [--stable] [--wait]] [--resume FILE [--harness H] [--model M]] [-C DIR]", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	hl := fs.Bool("headless", false, "no console: print one line per event (time, task id, kind, text) and exit when every task is at rest")
	_ = fs.Bool("timestamps", true, "with --headless, start each line with its time (the default; kept for old scripts)")
	stable := fs.Bool("stable", false, "with --headless, rename ids, times and digests to placeholders (T1, S1, hh:mm:ss) for golden tests")
	jsonOut := fs.Bool("json", false, "with --headless, print one JSON object per event, then one per task's verdict")
	wait := fs.Bool("wait", false, "with --headless, keep running once every task is at rest, for tasks added later (until interrupted)")
	resume := fs.String("resume", "", "resume a handed-off task from `FILE` before running")
	harness := fs.String("harness", "", "with --resume, the harness to continue with")
	model := fs.String("model", "", "with --resume, the model to continue with")
	noAnim := fs.Bool("no-anim", os.Getenv("ORCHESTRA_NO_ANIM") == "1", "console without animation")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	if !*hl && noTerminal(stdout, stderr, "add --headless to run the tasks without one") {
		return 1
	}
	o, err := coord.Open(coord.OpenParams{Dir: *dir})
	if err != nil {
		return fail(stderr, err)
	}
	defer o.Close()
	// This process is the repository's engine while it runs: CLI commands
	// reach it, and no background engine starts beside it.
	unserve, err := engine.Serve(o, version())
	var locked *engine.LockedError
	if errors.As(err, &locked) && *hl && *resume == "" && !(*stable && *jsonOut) {
		// Another engine runs these tasks: follow it, as `events
		// --follow` does, instead of refusing.
		o.Close()
		return followRun(*dir, *stable, *jsonOut, *wait, stdout, stderr)
	}
	if err != nil {
		return fail(stderr, err)
	}
	defer unserve()
	if *resume != "" {
		if code := resumeInto(o, *resume, *harness, *model, stdout, stderr); code != 0 {
			return code
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *hl {
		// With nothing to run, every task is trivially at rest, but no
		// event would ever arrive to say so: stop here instead of waiting.
		if *stable && *jsonOut {
			return usageError(stderr, "run", "--stable and --json are two different formats; give one")
		}
		format := headless.Real
		if *stable {
			format = headless.Stable
		} else if *jsonOut {
			format = headless.JSON
		}
		if !*wait {
			ts, err := o.Store.TaskList(ctx, store.TaskListParams{})
			if err != nil {
				return fail(stderr, err)
			}
			if err := nothingToRun(ts); err != nil {
				return fail(stderr, err)
			}
		}
		return headless.Run(ctx, o.Coordinator, stdout, headless.Options{Format: format, Wait: *wait})
	}
	return runConsole(ctx, o, consoleOptions{NoAnim: *noAnim, LeaveKey: ""}, stdout, stderr)
}

// nothingToRun returns an error saying so when no task can move without a
// human: a headless run would otherwise wait for an event that never comes.
func nothingToRun(ts []task.Task) error {
	if len(ts) == 0 {
		return errors.New("run: no tasks to run; add one with `orchestra-tui add` (see `orchestra-tui add -h`), or keep waiting for one with --wait")
	}
	counts := map[task.State]int{}
	for _, t := range ts {
		switch t.State {
		case task.StateQueued, task.StateLeased, task.StateRunning, task.StateMergeQueued, task.StateIntegrating:
			return nil
		}
		counts[t.State]++
	}
	var parts []string
	for _, s := range task.States {
		if n := counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	return fmt.Errorf("run: nothing to run: every task is at rest (%s); `orchestra-tui status` lists them, `retry TASK` queues a failed one again, `unpark TASK` a parked one, and --wait waits for new tasks",
		strings.Join(parts, ", "))
}

// followRun is `run --headless` beside a running engine: its events as they
// happen, until every task is at rest (with wait, until interrupted), then
// the verdict lines and the run's exit status, as a headless run of its
// own prints them.
func followRun(dir string, stable, jsonOut, wait bool, stdout, stderr io.Writer) int {
	format := headless.Real
	if stable {
		format = headless.Stable
	} else if jsonOut {
		format = headless.JSON
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cl, err := dialEvents(ctx, dir, "", "", 0)
	if err != nil {
		return fail(stderr, err)
	}
	defer cl.Close()
	var until headless.Until = headless.UntilRest
	if wait {
		until = nil
	}
	p := headless.New(stdout, format)
	if err := headless.Follow(ctx, cl, cl.Done(), stdout, headless.Options{Printer: p}, until); err != nil {
		return fail(stderr, err)
	}
	return headless.Summary(stdout, p, cl.Snapshot())
}
