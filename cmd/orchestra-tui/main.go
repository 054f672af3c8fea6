// Command orchestra-tui is a terminal operator console for unattended runs of
// AI coding agents. This package holds flags and subcommands only; the work
// lives in the packages they call.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/host"
)

const usage = `orchestra-tui: a terminal operator console for unattended runs of AI coding agents.

Usage:
  orchestra-tui [--no-anim] [-C DIR]     open the console on the repository around DIR (default .); it attaches
                                         to the repository's engine, starting it first; q detaches, agents keep running
  orchestra-tui --in-process             the console with the engine inside it: quitting stops every agent
  orchestra-tui --remote HOST[:REPO]     the console on another machine's engine, over ssh
                                         (runs "ssh HOST orchestra-tui attach --stdio"; ORCHESTRA_SSH_COMMAND replaces ssh)
  orchestra-tui engine [--foreground]    start the engine in the background (or run it in the foreground for a service)
  orchestra-tui stop [--keep-agents]     stop the engine and every agent; their tasks requeue without losing an attempt
                                         (--keep-agents: only the engine; the next one takes the agents up)
  orchestra-tui engines [--json]         the engines this store has heard from: host, version, slots in use, heartbeat
  orchestra-tui run --headless           run every task without the console, one line per event
                                         [--json | --stable] [--wait: keep running for tasks added later]
  orchestra-tui run --resume FILE        resume a handed-off task [--harness H] [--model M] [--headless]
  orchestra-tui add [flags]              add a task (--title --goal --verify --acceptance ... or --file F)
  orchestra-tui status [--json]          list tasks with state, phase and verdict
  orchestra-tui events [--follow] [--json] [--since SEQ] [--until STATE|rest] [--remote HOST[:REPO]]
                                         the ledger's events; --follow: the running engine's as they happen
  orchestra-tui correct TASK TEXT        record a human decision; a running engine types it into the live pane
  orchestra-tui resubmit|expire|cancel|park|unpark|approve TASK
  orchestra-tui extend TASK DURATION     extend a task's lease (e.g. 10m)
  orchestra-tui retry TASK               queue a failed or cancelled task again, with a fresh attempt budget
  orchestra-tui merge TASK               merge an approved task's branch into the checked-out branch
  orchestra-tui prune [--all]            remove the worktrees and branches of ended tasks (merged ones unless --all)
  orchestra-tui config [--defaults]      print orchestra.toml with every setting, commented
  orchestra-tui handoff export TASK --out FILE
  orchestra-tui fork train TASK [--harness H]   train a base for the task from its background (Claude Code)
  orchestra-tui fork run TASK --prompt TEXT     run a block as a fork of the task's base; prints its delta cost
  orchestra-tui fork list [TASK]                trained bases with cache clocks and the policy's next action
  orchestra-tui demo [--headless] [--fast] [--keep] [--exit-when-done] [--record F.cast] [--agent NAME]
  orchestra-tui demo handoff [--fast] [--keep]
  orchestra-tui harness list             every harness: built in or orchestra.toml, binary on PATH or not
  orchestra-tui harness check NAME       launch it in a pty in a scratch directory and lint what it does
  orchestra-tui model-stub [--addr 127.0.0.1:0]
  orchestra-tui agent --script FILE      the scripted agent the demo runs in its panes

TASK is a task id or any unique part of one, as 'status' shows it.

Tasks run on the harness given to 'add --harness': claude (Claude Code on
PATH), claude-print (claude -p), codex, codex-exec, gemini, gemini-print,
opencode, opencode-run, shell, or one defined in orchestra.toml ('harness
list' shows them all). The default, scripted, is the demo agent: it writes example artifacts but cannot change your code, so such
a task fails its verify gate; see README.md to give it a script.
Every subcommand takes -C DIR and -h. Exit status: 0 ok, 1 failure, 2 usage.
`

func main() {
	coord.HideStoreURL() // before anything starts a child (storeurl.go)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	args = hoistGlobalFlags(args)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" {
		return console(args, stdout, stderr)
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "console":
		return console(rest, stdout, stderr)
	case "run":
		return runCmd(rest, stdout, stderr)
	case "engine":
		return engineCmd(rest, stdout, stderr)
	case "stop":
		return stopCmd(rest, stdout, stderr)
	case "attach":
		return attachCmd(rest, stdin, stdout, stderr)
	case "engines":
		return enginesCmd(rest, stdout, stderr)
	case "add":
		return addCmd(rest, stdout, stderr)
	case "status":
		return statusCmd(rest, stdout, stderr)
	case "events":
		return eventsCmd(rest, stdout, stderr)
	case "correct", "resubmit", "extend", "expire", "cancel", "park", "unpark", "approve", "retry", "merge":
		return opCmd(cmd, rest, stdout, stderr)
	case "prune":
		return pruneCmd(rest, stdin, stdout, stderr)
	case "config":
		return configCmd(rest, stdout, stderr)
	case "handoff":
		return handoffCmd(rest, stdout, stderr)
	case "fork":
		return forkCmd(rest, stdout, stderr)
	case "demo":
		return demoCmd(rest, stdout, stderr)
	case "model-stub":
		return modelStubCmd(rest, stdout, stderr)
	case "agent":
		return agent.Main(rest, stdin, stdout)
	case "host":
		// Hidden: the engine starts one per session (package host).
		return host.Main(rest, stderr)
	case "harness":
		return harnessCmd(rest, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "orchestra-tui", version())
		return 0
	default:
		return unknownCommand(stderr, cmd)
	}
}

// fail prints an error the way every subcommand does and returns status 1.
func fail(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "orchestra-tui: %v\n", err)
	return 1
}

// hoistGlobalFlags moves the global flags given before a subcommand (-C DIR,
// --no-anim) after it, where the subcommand's own flag set reads them, so
// `orchestra-tui -C DIR status` is `orchestra-tui status -C DIR` as with git
// and go. With no subcommand the arguments are the console's and stay.
func hoistGlobalFlags(args []string) []string {
	var global []string
	i := 0
	for i < len(args) {
		a := args[i]
		switch {
		case a == "-C" || a == "--C":
			if i+1 >= len(args) {
				return args // the flag set reports the missing value
			}
			global = append(global, a, args[i+1])
			i += 2
			continue
		case strings.HasPrefix(a, "-C=") || strings.HasPrefix(a, "--C=") || a == "-no-anim" || a == "--no-anim":
			global = append(global, a)
			i++
			continue
		case a == "--" || strings.HasPrefix(a, "-"):
			return args // a console flag: no subcommand follows
		}
		break
	}
	if i == 0 || i >= len(args) {
		return args
	}
	out := []string{args[i]}
	for j := 0; j < len(global); j++ {
		g := global[j]
		if strings.TrimLeft(g, "-") == "no-anim" && args[i] != "run" && args[i] != "demo" && args[i] != "console" {
			continue // a display setting the subcommand has no use for
		}
		out = append(out, g)
	}
	return append(out, args[i+1:]...)
}
