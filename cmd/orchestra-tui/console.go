package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/ui"
)

// console opens the operator console on the repository's store, running the
// coordinator and the workers in this process.
func console(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("orchestra-tui", "orchestra-tui [flags]   (the console; `orchestra-tui help` lists the subcommands)", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	noAnim := fs.Bool("no-anim", os.Getenv("ORCHESTRA_NO_ANIM") == "1", "no spinners or repainting status line (also ORCHESTRA_NO_ANIM=1)")
	leave := fs.String("leave-key", ui.DefaultLeaveFocusKey, "the key that leaves focus mode")
	record := fs.String("record", "", "write the console's screen to `FILE.cast` (asciicast v2)")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	o, err := coord.Open(coord.OpenParams{Dir: *dir, Control: true})
	if err != nil {
		return fail(stderr, err)
	}
	defer o.Close()
	return runConsole(context.Background(), o, consoleOptions{NoAnim: *noAnim, LeaveKey: *leave, Record: *record}, stdout, stderr)
}

type consoleOptions struct {
	NoAnim   bool
	LeaveKey string
	Record   string
	// Script, if set, runs alongside the console (the demo's operator).
	Script func(ctx context.Context, p *tea.Program)
}

func runConsole(ctx context.Context, o *coord.Opened, opts consoleOptions, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- o.Run(ctx) }()
	// The console's first frame is the history: wait until the coordinator
	// has loaded the store, or has failed to.
	select {
	case <-o.Loaded():
	case err := <-errc:
		if err == nil {
			return 0
		}
		return fail(stderr, err)
	}

	m := ui.New(o, ui.Options{NoAnim: opts.NoAnim, LeaveFocusKey: opts.LeaveKey, RepoName: filepath.Base(o.Repo.Root), Author: author()})
	out := stdout
	var rec *castRecorder
	if opts.Record != "" {
		var err error
		if rec, err = newCastRecorder(opts.Record, stdout); err != nil {
			return fail(stderr, err)
		}
		out = rec
	}
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithOutput(out))
	stop := ui.Subscribe(p, o)
	if opts.Script != nil {
		go opts.Script(ctx, p)
	}
	_, runErr := p.Run()
	stop()
	cancel()
	err := <-errc
	if rec != nil {
		if cerr := rec.Close(); cerr != nil && runErr == nil {
			runErr = cerr
		}
	}
	if runErr != nil && runErr != tea.ErrProgramKilled && ctx.Err() == nil {
		return fail(stderr, runErr)
	}
	if err != nil {
		return fail(stderr, err)
	}
	return 0
}

func author() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "operator"
}

var _ = fmt.Sprint
