package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/probe"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/session"
)

const harnessUsage = `usage: orchestra-tui harness list [-C DIR]
       orchestra-tui harness check NAME [-C DIR] [--model M] [--idle 3s] [--json]`

// harnessCmd lists the harnesses a repository can use, or lints one.
func harnessCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, harnessUsage)
		return 2
	}
	switch args[0] {
	case "list":
		return harnessList(args[1:], stdout, stderr)
	case "check":
		return harnessCheck(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, harnessUsage)
		return 0
	default:
		return usageError(stderr, "harness", "unknown subcommand %q; use list or check", args[0])
	}
}

// harnessConfig loads orchestra.toml from the repository around dir, or
// from dir itself outside a repository, so a harness can be checked
// before any task exists.
func harnessConfig(dir string) (config.Config, error) {
	root := dir
	if r, err := repo.Open(dir); err == nil {
		root = r.Root
	}
	return config.Load(root)
}

// harnessVars fills argv placeholders the way the console does.
func harnessVars(model string) map[string]string {
	self, _ := os.Executable()
	return map[string]string{"self": self, "model": model, "script": ""}
}

func harnessList(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("harness list", "orchestra-tui harness list [-C DIR]", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	cfg, err := harnessConfig(*dir)
	if err != nil {
		return fail(stderr, err)
	}
	names := make([]string, 0, len(cfg.Harness))
	for n := range cfg.Harness {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFROM\tDELIVERY\tBINARY")
	for _, n := range names {
		spec := cfg.Harness[n].Expand(harnessVars(""))
		bin, err := session.Resolve(spec, os.Environ(), *dir)
		if err != nil {
			bin = "not found (" + spec.Argv[0] + ")"
			if !strings.Contains(spec.Argv[0], "/") {
				bin = "not on PATH (" + spec.Argv[0] + ")"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n, cfg.HarnessSource(n), spec.Delivery, bin)
	}
	tw.Flush()
	return 0
}

func harnessCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("harness check", "orchestra-tui harness check NAME [-C DIR] [--model M] [--idle 3s] [--no-model] [--json]", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	model := fs.String("model", "", "the model to fill {{model}} with")
	idle := fs.Duration("idle", 3*time.Second, "how long to watch the settled screen for changes")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	noModel := fs.Bool("no-model", false, "send nothing to the model: leave out the submit check (and a one-shot program's run)")
	// The name may come before or after the flags, as with git.
	name, rest := "", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, rest = args[0], args[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return parseStatus(err)
	}
	switch {
	case name == "" && fs.NArg() == 1:
		name = fs.Arg(0)
	case name == "" || fs.NArg() > 0:
		return usageError(stderr, "harness check", "give one harness name (`orchestra-tui harness list` shows them)")
	}
	cfg, err := harnessConfig(*dir)
	if err != nil {
		return fail(stderr, err)
	}
	spec, ok := cfg.Harness[name]
	if !ok {
		return fail(stderr, fmt.Errorf("no harness named %q; `orchestra-tui harness list` shows them", name))
	}
	scratch, err := os.MkdirTemp("", "orchestra-harness-check-")
	if err != nil {
		return fail(stderr, err)
	}
	defer os.RemoveAll(scratch)
	params := probe.Params{Spec: spec.Expand(harnessVars(*model)), Dir: scratch, Idle: *idle, NoModel: *noModel}
	if params.SendsToModel() && !*asJSON {
		// Said before it happens: with a real provider it is billed.
		fmt.Fprintf(stdout, "note: this check sends one short request to the model (%q, asked to reply OK); --no-model leaves it out\n", probe.DefaultType)
	}
	rep, err := probe.Run(context.Background(), params)
	if err != nil {
		return fail(stderr, err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fail(stderr, err)
		}
	} else {
		printReport(stdout, rep, cfg.HarnessSource(name))
	}
	if !rep.Green() {
		return 1
	}
	return 0
}

// printReport writes the lint as one line per check, its mark first.
func printReport(w io.Writer, rep probe.Report, from string) {
	fmt.Fprintf(w, "harness %s (%s)\n", rep.Harness, from)
	marks := map[probe.Status]string{probe.OK: "✓", probe.Warn: "!", probe.Fail: "✗", probe.Skip: "·"}
	for _, c := range rep.Checks {
		fmt.Fprintf(w, "  %s %-8s %s\n", marks[c.Status], c.Name, c.Text)
		for _, s := range c.Suggest {
			fmt.Fprintf(w, "             suggested: %s\n", s)
		}
	}
	if rep.Green() {
		fmt.Fprintln(w, "green: nothing failed (see any ! above)")
		return
	}
	if rep.Screen != "" {
		fmt.Fprintf(w, "last screen:\n%s\n", rep.Screen)
	}
	// Each failure's own advice where it has one: a dialog is answered in
	// the program, not in orchestra.toml.
	advised := false
	for _, c := range rep.Checks {
		if c.Status == probe.Fail && c.Fix != "" {
			fmt.Fprintf(w, "not green (%s): %s\n", c.Name, c.Fix)
			advised = true
		}
	}
	if !advised {
		fmt.Fprintf(w, "not green: fix what is marked ✗ in %s\n", config.FileName)
	}
}
