package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/orchestra-tui/orchestra-tui/demo"
	"github.com/orchestra-tui/orchestra-tui/demo/scenario"
)

// demoCmd runs the demo scenario: a throwaway repository, one task through
// every phase with the scripted agent and a scripted operator, then the
// proofs. It exits non-zero when any proof fails, so it is a CI gate.
func demoCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "handoff" {
		return demoHandoffCmd(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	hl := fs.Bool("headless", false, "no console: print one stable line per event, then the proofs")
	fast := fs.Bool("fast", false, "no pauses: the agent's pacing and the operator's are zero")
	keep := fs.Bool("keep", false, "keep the demo directory (the repository, its state and the pane recordings) and print where")
	record := fs.String("record", "", "write the console's screen to `FILE.cast` (asciicast v2) and copy the panes' recordings next to it")
	agentName := fs.String("agent", "scripted", "the agent in the panes: `scripted`")
	noAnim := fs.Bool("no-anim", os.Getenv("ORCHESTRA_NO_ANIM") == "1", "no spinners or repainting status line (also ORCHESTRA_NO_ANIM=1)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "orchestra-tui: demo: unexpected argument %q (subcommand: handoff)\n", fs.Arg(0))
		return 2
	}
	if *hl && *record != "" {
		fmt.Fprintln(stderr, "orchestra-tui: demo: --record records the console's screen; drop --headless to use it")
		return 2
	}
	var h scenario.Harness
	switch *agentName {
	case "scripted":
		h = scenario.Scripted()
	default:
		fmt.Fprintf(stderr, "orchestra-tui: demo: --agent %s is not built yet (available: scripted)\n", *agentName)
		return 2
	}
	if *record != "" {
		abs, err := filepath.Abs(*record)
		if err != nil {
			return fail(stderr, err)
		}
		*record = abs
	}

	s, err := scenario.Prepare(scenario.Options{Fast: *fast, Keep: *keep, Record: *record, Harness: h})
	if err != nil {
		return fail(stderr, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := runDemo(ctx, s, *hl, consoleOptions{NoAnim: *noAnim, Record: *record}, stdout, stderr)
	if err := s.Close(); err != nil {
		fmt.Fprintf(stderr, "orchestra-tui: demo: cleaning up %s: %v\n", s.Dir, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

func runDemo(ctx context.Context, s *scenario.Scenario, hl bool, co consoleOptions, stdout, stderr io.Writer) int {
	if hl {
		return scenario.RunHeadless(ctx, s, stdout)
	}
	op := s.NewConsole()
	co.Script = op.Run
	code := runConsole(ctx, s.Opened, co, stdout, stderr)
	if co.Record != "" {
		fmt.Fprintf(stdout, "console recording: %s\n", co.Record)
	}
	return s.Finish(ctx, stdout, nil, op.Operator(), code, op.Err())
}

// demoHandoffCmd is `demo handoff`: the handoff demo, proved the same way.
func demoHandoffCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo handoff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fast := fs.Bool("fast", false, "no pauses: the agent's pacing is zero")
	keep := fs.Bool("keep", false, "keep the demo directory and print where")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := demo.RunHandoff(ctx, stdout, demo.HandoffOptions{Fast: *fast, Keep: *keep}); err != nil {
		return 1
	}
	return 0
}
