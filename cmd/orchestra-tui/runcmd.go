package main

import (
	"context"
	"flag"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/headless"
)

// runCmd runs the repository's tasks, headless or in the console.
func runCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	hl := fs.Bool("headless", false, "no console: print one stable line per event and exit when every task is at rest")
	ts := fs.Bool("timestamps", false, "with --headless, start each line with its time and keep real ids")
	resume := fs.String("resume", "", "resume a handed-off task from `FILE` before running")
	harness := fs.String("harness", "", "with --resume, the harness to continue with")
	model := fs.String("model", "", "with --resume, the model to continue with")
	noAnim := fs.Bool("no-anim", os.Getenv("ORCHESTRA_NO_ANIM") == "1", "console without animation")
	if err := fs.Parse(args); err != nil {
		return 2
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
		return headless.Run(ctx, o.Coordinator, stdout, headless.Options{Timestamps: *ts})
	}
	return runConsole(ctx, o, consoleOptions{NoAnim: *noAnim, LeaveKey: ""}, stdout, stderr)
}
