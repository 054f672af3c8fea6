package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/jail"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ", ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// taskFile is a task as written in a TOML or JSON file for `add --file`.
type taskFile struct {
	Title        string   `toml:"title" json:"title"`
	Goal         string   `toml:"goal" json:"goal"`
	Acceptance   []string `toml:"acceptance" json:"acceptance"`
	Verify       string   `toml:"verify" json:"verify"`
	Pipeline     []string `toml:"pipeline" json:"pipeline"`
	Harness      string   `toml:"harness" json:"harness"`
	Model        string   `toml:"model" json:"model"`
	Capabilities []string `toml:"capabilities" json:"capabilities"`
}

// addCmd creates a task. With a console running it goes through the console;
// otherwise it is written to the store, where the next console finds it.
func addCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("add", "orchestra-tui add --title T --goal G --verify CMD [flags]\n       orchestra-tui add --file TASK.toml|TASK.json [flags]", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	file := fs.String("file", "", "read the task from a TOML or JSON `FILE`")
	var tf taskFile
	var acceptance, caps listFlag
	fs.StringVar(&tf.Title, "title", "", "short title")
	fs.StringVar(&tf.Goal, "goal", "", "what the task must achieve")
	fs.Var(&acceptance, "acceptance", "an acceptance check (repeat for more)")
	fs.StringVar(&tf.Verify, "verify", "", "the project's test command that decides when the task is done")
	pipeline := fs.String("pipeline", "", "phases to run, e.g. plan,implement,review (default: all five)")
	fs.StringVar(&tf.Harness, "harness", "", "the agent harness (default: "+coord.DefaultHarness+")")
	fs.StringVar(&tf.Model, "model", "", "the model the harness should use")
	fs.Var(&caps, "capability", "a capability the task needs (repeat for more)")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "add", "unexpected argument %q: give the task with flags (--title, --goal, --verify) or --file", fs.Arg(0))
	}
	if *file != "" {
		// Flags given with --file override the file's values.
		flags := tf
		tf = taskFile{}
		if err := readTaskFile(*file, &tf); err != nil {
			return fail(stderr, err)
		}
		mergeTaskFlags(&tf, flags)
	}
	tf.Acceptance = append(tf.Acceptance, acceptance...)
	tf.Capabilities = append(tf.Capabilities, caps...)
	if code := checkTaskFields(tf, *file, stderr); code != 0 {
		return code
	}
	if err := task.CheckSizes(tf.Title, tf.Goal, tf.Acceptance); err != nil {
		return fail(stderr, fmt.Errorf("add: %w", err))
	}
	t := task.Task{Title: tf.Title, Goal: tf.Goal, Acceptance: tf.Acceptance, Verify: tf.Verify,
		Harness: tf.Harness, Model: tf.Model, Capabilities: tf.Capabilities}
	spec, from := *pipeline, "--pipeline"
	if spec == "" && len(tf.Pipeline) > 0 {
		spec, from = strings.Join(tf.Pipeline, ","), *file+": pipeline"
	}
	if spec != "" {
		p, err := task.ParsePipeline(spec)
		if err != nil {
			return usageError(stderr, "add", "%s: %v", from, err)
		}
		t.Pipeline = p
	}
	r, err := repo.Open(*dir)
	if err != nil {
		return fail(stderr, err)
	}
	// The store is about to be created under .orchestra/: exclude it now,
	// so it never shows as untracked before the console first runs.
	if err := r.Exclude(task.StateDir + "/"); err != nil {
		return fail(stderr, err)
	}
	cfg, err := config.Load(r.Root)
	if err != nil {
		return fail(stderr, err)
	}
	if t.Harness != "" {
		if _, ok := cfg.Harness[t.Harness]; !ok {
			return usageError(stderr, "add", "--harness: no harness named %q is configured (known: %s); define [harness.%s] in %s to add one",
				t.Harness, strings.Join(harnessNames(cfg), ", "), t.Harness, config.FileName)
		}
	}
	// The machine's fault, said before it costs a night: the engine does
	// not lease the task until the program is found.
	h := t.Harness
	if h == "" {
		h = coord.DefaultHarness
	}
	if why := session.ProgramMissing(cfg.Harness[h].Expand(harnessVars(t.Model)), os.Environ(), r.Root); why != "" {
		fmt.Fprintf(stderr, "warning: %s The task is added and waits, with no attempt counted, until it is found.\n", why)
	}
	if t.Harness == "" {
		// Said once, where the choice is made: a task with no harness runs
		// the demo's scripted agent, which is rarely what a first-time user
		// meant.
		fmt.Fprintf(stderr, "note: no --harness given, so this task runs on the built-in %q demo agent; `orchestra-tui harness list` shows the agent CLIs (e.g. --harness claude)\n", coord.DefaultHarness)
	}
	// As long as the other commands allow: on a busy machine (a race build,
	// load 60) opening the store and loading its tasks took over 10 s.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := engineDo(ctx, r.Root, coord.Command{Kind: coord.CmdAdd, Task: &t, Author: author()})
	if err == nil {
		fmt.Fprintln(stdout, res.TaskID)
		return 0
	}
	if !errors.Is(err, errNoEngine) {
		return fail(stderr, err)
	}
	res, err = applyOffline(ctx, r.Root, coord.Command{Kind: coord.CmdAdd, Task: &t, Author: author()})
	if err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintln(stdout, res.TaskID)
	return 0
}

// mergeTaskFlags lays the scalar flags given on the command line over a
// task read from a file.
func mergeTaskFlags(tf *taskFile, flags taskFile) {
	for _, p := range []struct {
		dst *string
		v   string
	}{
		{&tf.Title, flags.Title}, {&tf.Goal, flags.Goal}, {&tf.Verify, flags.Verify},
		{&tf.Harness, flags.Harness}, {&tf.Model, flags.Model},
	} {
		if p.v != "" {
			*p.dst = p.v
		}
	}
}

// checkTaskFields reports a task without a goal or a verify command as a
// usage error naming the flag (or the file) that should have given it.
func checkTaskFields(tf taskFile, file string, stderr io.Writer) int {
	var missing []string
	if strings.TrimSpace(tf.Goal) == "" {
		missing = append(missing, "--goal (what the task must achieve)")
	}
	if strings.TrimSpace(tf.Verify) == "" {
		missing = append(missing, `--verify (the project's test command that decides when the task is done, e.g. "go test ./...")`)
	}
	if len(missing) == 0 {
		return 0
	}
	where := ""
	if file != "" {
		where = fmt.Sprintf(" (or goal and verify in %s)", file)
	}
	return usageError(stderr, "add", "missing %s%s; see `orchestra-tui add -h`", strings.Join(missing, " and "), where)
}

// harnessNames lists the configured harnesses, sorted.
func harnessNames(cfg config.Config) []string {
	names := make([]string, 0, len(cfg.Harness))
	for n := range cfg.Harness {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// maxTaskFile bounds a task file: tasks are text an operator writes.
const maxTaskFile = 4 << 20

func readTaskFile(path string, tf *taskFile) error {
	data, err := jail.ReadRegular(path, maxTaskFile)
	if err != nil {
		return fmt.Errorf("add --file: %w", err)
	}
	return decodeTaskFile(path, data, tf)
}

// decodeTaskFile decodes a task file's content; path names it and its
// extension says TOML or JSON.
func decodeTaskFile(path string, data []byte, tf *taskFile) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".json":
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(tf); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	case ".toml":
		md, err := toml.Decode(string(data), tf)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if und := md.Undecoded(); len(und) > 0 {
			return fmt.Errorf("%s: unknown keys: %v", path, und)
		}
	default:
		return fmt.Errorf("%s: a task file is .toml or .json", path)
	}
	return nil
}
