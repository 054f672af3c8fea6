package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/headless"
	"github.com/orchestra-tui/orchestra-tui/store"
)

// runCmd runs the repository's tasks, headless or in the console.
func runCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run", "orchestra-tui run [--headless] [--resume FILE [--harness H] [--model M]] [-C DIR]", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	hl := fs.Bool("headless", false, "no console: print one stable line per event and exit when every task is at rest")
	stamps := fs.Bool("timestamps", false, "with --headless, start each line with its time and keep real ids")
	resume := fs.String("resume", "", "resume a handed-off task from `FILE` before running")
	harness := fs.String("harness", "", "with --resume, the harness to continue with")
	model := fs.String("model", "", "with --resume, the model to continue with")
	noAnim := fs.Bool("no-anim", os.Getenv("ORCHESTRA_NO_ANIM") == "1", "console without animation")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	o, err := coord.Open(coord.OpenParams{Dir: *dir, Control: true})
	if err != nil {
		return fail(stderr, err)
	}
	defer o.Close()
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
		ts, err := o.Store.TaskList(ctx, store.TaskListParams{})
		if err != nil {
			return fail(stderr, err)
		}
		if len(ts) == 0 {
			return fail(stderr, errors.New("run: no tasks to run; add one with `orchestra-tui add` (see `orchestra-tui add -h`)"))
		}
		return headless.Run(ctx, o.Coordinator, stdout, headless.Options{Timestamps: *stamps})
	}
	return runConsole(ctx, o, consoleOptions{NoAnim: *noAnim, LeaveKey: ""}, stdout, stderr)
}
