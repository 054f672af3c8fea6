package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
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
	agentName := fs.String("agent", "scripted", "the `NAME` of the agent in the panes: scripted, claude, codex, gemini or opencode (a real CLI against a scripted model server; see below)")
	exitWhenDone := fs.Bool("exit-when-done", false, "close the console once the proofs are on screen (CI, recordings); without it the console stays open on the finished run until you quit")
	noAnim := fs.Bool("no-anim", os.Getenv("ORCHESTRA_NO_ANIM") == "1", "no spinners or repainting status line (also ORCHESTRA_NO_ANIM=1)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: orchestra-tui demo [flags]   (or: orchestra-tui demo handoff [--fast] [--keep])")
		fs.PrintDefaults()
		fmt.Fprint(stderr, demoClaudeHelp)
	}
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
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
	case "claude":
		useReal := os.Getenv(scenario.RealEnv) == "1"
		h = scenario.Claude(scenario.ClaudeOptions{Real: useReal, Model: os.Getenv("ORCHESTRA_DEMO_MODEL")})
		if useReal {
			fmt.Fprintln(stderr, "orchestra-tui: demo: "+scenario.RealEnv+"=1: Claude Code talks to the real service with your own login; the scripted beats cannot be forced, so this is the plain task and its verify gate")
		}
	default:
		a, err := scenario.Agent(*agentName, scenario.AgentOptions{})
		if err != nil {
			fmt.Fprintf(stderr, "orchestra-tui: demo: unknown --agent %q (available: scripted, claude, %s)\n", *agentName, strings.Join(scenario.AgentNames, ", "))
			return 2
		}
		h = a
	}
	if *record != "" {
		abs, err := filepath.Abs(*record)
		if err != nil {
			return fail(stderr, err)
		}
		*record = abs
	}

	if !*hl && noTerminal(stdout, stderr, "add --headless for the demo as text") {
		return 1
	}
	s, err := scenario.Prepare(scenario.Options{Fast: *fast, Keep: *keep, Record: *record, Harness: h})
	if err != nil {
		return fail(stderr, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := runDemo(ctx, s, *hl, *exitWhenDone, consoleOptions{NoAnim: *noAnim, Record: *record}, stdout, stderr)
	if err := s.Close(); err != nil {
		fmt.Fprintf(stderr, "orchestra-tui: demo: cleaning up %s: %v\n", s.Dir, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// exitInterrupted is the exit status of a demo the user stopped before it
// ended: 128 + SIGINT, as a shell reports an interrupted command.
const exitInterrupted = 130

func runDemo(ctx context.Context, s *scenario.Scenario, hl, exitWhenDone bool, co consoleOptions, stdout, stderr io.Writer) int {
	if hl {
		code := scenario.RunHeadless(ctx, s, stdout)
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "demo interrupted")
			return exitInterrupted
		}
		return code
	}
	op := s.NewConsole()
	op.ExitWhenDone = exitWhenDone
	co.Script = op.Run
	code := runConsole(ctx, s.Opened, co, stdout, stderr)
	if co.Record != "" {
		fmt.Fprintf(stdout, "console recording: %s\n", co.Record)
	}
	if !op.Operator().Done() || ctx.Err() != nil {
		// Quit (or interrupted) before the task ended: the beats did not
		// all happen, which is no failure of the console.
		fmt.Fprintln(stderr, "demo interrupted")
		return exitInterrupted
	}
	if code != 0 {
		return code
	}
	o, ok := op.Outcome()
	if !ok {
		// The user quit while the proofs were being checked.
		o = s.Prove(ctx, op.Operator(), code, op.Err())
	}
	return s.Report(ctx, stdout, nil, op.Operator(), o)
}

// demoHandoffCmd is `demo handoff`: the handoff demo, proved the same way.
func demoHandoffCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo handoff", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fast := fs.Bool("fast", false, "no pauses: the agent's pacing is zero")
	keep := fs.Bool("keep", false, "keep the demo directory and print where")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := demo.RunHandoff(ctx, stdout, demo.HandoffOptions{Fast: *fast, Keep: *keep}); err != nil {
		return 1
	}
	return 0
}

// demoClaudeHelp is the part of `demo --help` about --agent claude.
const demoClaudeHelp = `
--agent claude runs the same scenario with the real Claude Code CLI in the
panes (found as $ORCHESTRA_CLAUDE_BIN, else "claude" on PATH) against a
scripted model server on 127.0.0.1: every beat is played by the server's
replies and done by the CLI's own tools. Claude Code runs with a temporary
HOME inside the demo directory; your ~/.claude is never read or written.

--agent codex, gemini and opencode do the same with the Codex CLI, Gemini
CLI and opencode (found as $ORCHESTRA_CODEX_BIN, $ORCHESTRA_GEMINI_BIN,
$ORCHESTRA_OPENCODE_BIN, else on PATH; .ci/install-agents.sh installs them),
each with its built-in harness and a HOME of its own, against a stub of its
provider's API; the stub's file edits are done by the CLI's shell tool.

With ORCHESTRA_DEMO_REAL=1, --agent claude uses the real service and your own HOME and
login instead (ORCHESTRA_DEMO_MODEL picks the model). A real model cannot be
made to stall, to ignore its brief or to write an invalid plan, so that run
is the plain task: the operator resubmits a stuck pane and approves, and
only the verify proofs are checked. Claude Code asks to trust a directory
it has not seen: set TMPDIR to a directory you have trusted in Claude Code
(a trusted parent counts) so the demo directory is made inside it; see
docs/RECORDING.md.
`
