package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/orchestra-tui/orchestra-tui/demo/project"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/handoff"
	"github.com/orchestra-tui/orchestra-tui/headless"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// Models of the handoff demo: the same scripted harness, told it is two
// different models, so the brief on machine B can be checked for A's.
const (
	HandoffModelA = "model-a"
	HandoffModelB = "model-b"
)

// HandoffOptions configure the handoff demo.
type HandoffOptions struct {
	// Fast sets the agent's pacing to zero.
	Fast bool
	// Keep leaves the demo directory in place and says where it is.
	Keep bool
	// TempDir is where the demo directory is made; "" means the system's.
	TempDir string
	// Self is the program the scripted harness runs as the agent
	// ({{self}} agent --script FILE); "" means this executable.
	Self string
	// AgentEnv is set in the agent's environment (a test binary uses it to
	// act as the agent).
	AgentEnv map[string]string
}

// RunHandoff is the reproducible proof of a handoff. Machine A's checkout
// runs the scripted agent as model A; it fixes half the bug, the verify gate
// finds the tests still red and the run ends non-zero. The task is exported
// to a handoff file and its branch pushed to a shared origin; then machine
// A's checkout and state are deleted. Machine B, a clone made before the
// branch existed, resumes from the file alone as model B and runs to green.
// It then proves, by itself: B's first brief (as the agent recorded it)
// names model A and the changed file; the tests run directly on B's branch
// are green; B's verify gate said ok. Any failed proof prints FAILED with
// the reasons and returns an error.
func RunHandoff(ctx context.Context, w io.Writer, opts HandoffOptions) (err error) {
	start := time.Now()
	dir, err := os.MkdirTemp(opts.TempDir, "orchestra-handoff-")
	if err != nil {
		return fmt.Errorf("make the demo directory: %w", err)
	}
	defer func() {
		if opts.Keep {
			fmt.Fprintf(w, "Kept the demo directory: %s\n", dir)
			return
		}
		err = errors.Join(err, os.RemoveAll(dir))
	}()
	h := &handoffRun{dir: dir, w: w, opts: opts}
	if err := h.run(ctx); err != nil {
		fmt.Fprintf(w, "FAILED: %v\n", err)
		return err
	}
	fmt.Fprintf(w, "PASSED: handoff demo in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// handoffRun is one run of the handoff demo.
type handoffRun struct {
	dir  string
	w    io.Writer
	opts HandoffOptions

	origin, a, b string // the bare origin and the two checkouts
	file         string // the handoff file
}

func (h *handoffRun) say(format string, args ...any) {
	fmt.Fprintf(h.w, "── "+format+"\n", args...)
}

func (h *handoffRun) run(ctx context.Context) error {
	if err := h.makeRepos(); err != nil {
		return err
	}
	if err := h.machineA(ctx); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(h.dir, "machine-a")); err != nil {
		return fmt.Errorf("delete machine A: %w", err)
	}
	h.say("Machine A's checkout and state are deleted; B has its clone and %s.", filepath.Base(h.file))
	return h.machineB(ctx)
}

// makeRepos writes the calc project as machine A's checkout, pushes it to a
// bare origin and clones that as machine B's checkout.
func (h *handoffRun) makeRepos() error {
	h.origin = filepath.Join(h.dir, "origin.git")
	h.a = filepath.Join(h.dir, "machine-a", "calc")
	h.b = filepath.Join(h.dir, "machine-b", "calc")
	h.file = filepath.Join(h.dir, "handoff.json")
	for _, d := range []string{h.origin, h.a, filepath.Dir(h.b)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("make %s: %w", d, err)
		}
	}
	if err := project.Git(h.origin, "init", "-q", "--bare", "-b", "main"); err != nil {
		return err
	}
	if err := project.WriteProject(h.a); err != nil {
		return err
	}
	if err := project.Git(h.a, "remote", "add", "origin", h.origin); err != nil {
		return err
	}
	if err := project.Git(h.a, "push", "-q", "origin", "main"); err != nil {
		return err
	}
	// B clones before A's task branch exists, so resuming has to fetch it.
	return project.Git(filepath.Dir(h.b), "clone", "-q", h.origin, h.b)
}

// machineA runs the task as model A until the verify gate stops it, then
// exports the handoff and pushes the task branch.
func (h *handoffRun) machineA(ctx context.Context) error {
	h.say("Machine A: model %s fixes Add only; the tests stay red.", HandoffModelA)
	o, err := h.open(h.a, agent.Entry{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcHalf}}})
	if err != nil {
		return err
	}
	defer o.Close()
	now := time.Now()
	t, err := coord.Prepare(task.Task{Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance, Verify: project.VerifyCommand,
		Harness: "scripted", Model: HandoffModelA, Pipeline: task.Pipeline{task.PhaseImplement}}, o.Repo, now)
	if err != nil {
		return err
	}
	added := task.Event{ID: task.NewULID(now), TaskID: t.ID, Kind: task.EvTaskAdded, At: now,
		Text: fmt.Sprintf("Task added: %s (%s).", t.Title, t.Pipeline)}
	t.Signature = o.Key().Sign(t) // accepted here, as the engine's add would
	if err := o.Store.TaskInsert(ctx, t, added); err != nil {
		return err
	}
	code := headless.Run(ctx, o.Coordinator, prefixed(h.w, "A │ "), headless.Options{Format: headless.Stable})
	var problems []string
	if code == 0 {
		problems = append(problems, "machine A's run exited 0; it should have stopped with the tests red")
	}
	if v, err := lastVerdict(ctx, o.Store, t.ID); err != nil {
		problems = append(problems, err.Error())
	} else if v.Status != verify.StatusIncomplete {
		problems = append(problems, "machine A's verify gate said "+v.Line()+"; want incomplete")
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	h.say("Machine A's run exited %d: the verify gate marked the task incomplete.", code)

	d, err := handoff.Export(ctx, o.Store, o.Repo, t.ID, "orchestra-tui demo")
	if err != nil {
		return err
	}
	data, err := handoff.Marshal(d)
	if err != nil {
		return err
	}
	if err := os.WriteFile(h.file, data, 0o644); err != nil {
		return fmt.Errorf("write the handoff: %w", err)
	}
	if err := project.Git(h.a, "push", "-q", "origin", d.Repo.Branch); err != nil {
		return err
	}
	h.say("Exported %s (%d bytes): phase %s, files changed %v, verdict %s; pushed %s.",
		filepath.Base(h.file), len(data), d.PhaseReached, d.FilesChanged, d.Verdict.Line, d.Repo.Branch)
	return nil
}

// machineB resumes from the handoff file as model B, runs to green and
// checks the proofs.
func (h *handoffRun) machineB(ctx context.Context) error {
	h.say("Machine B: resume from the file alone as model %s.", HandoffModelB)
	o, err := h.open(h.b, agent.Entry{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}})
	if err != nil {
		return err
	}
	defer o.Close()
	data, err := os.ReadFile(h.file)
	if err != nil {
		return fmt.Errorf("read the handoff: %w", err)
	}
	d, err := handoff.Parse(data)
	if err != nil {
		return err
	}
	t, err := handoff.Resume(ctx, o.Store, o.Repo, d, "", HandoffModelB, time.Now(), o.Key())
	if err != nil {
		return err
	}
	h.say("Resumed task %s as %s: phase %s on %s, harness %s, model %s.", d.Task.ID, t.ID, t.Phase, t.Branch, t.Harness, t.Model)
	code := headless.Run(ctx, o.Coordinator, prefixed(h.w, "B │ "), headless.Options{Format: headless.Stable})

	var problems []string
	if code != 0 {
		problems = append(problems, fmt.Sprintf("machine B's run exited %d", code))
	}
	problems = append(problems, h.proveBrief()...)
	problems = append(problems, h.proveGate(ctx, o.Store, t.ID)...)
	problems = append(problems, h.proveDirect(t.Branch)...)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// proveBrief checks B's first brief, as the scripted agent recorded it: its
// continuity section names model A, harness, the changed file and the
// verdict that stopped A.
func (h *handoffRun) proveBrief() []string {
	path := filepath.Join(h.dir, "machine-b", "record", "brief-implement-1-1.md")
	data, err := os.ReadFile(path)
	if err != nil {
		return []string{"the agent on machine B recorded no first brief: " + err.Error()}
	}
	text := string(data)
	i := strings.Index(text, task.HeadingContinuity)
	if i < 0 {
		return []string{"B's first brief has no continuity section"}
	}
	cont := text[i:]
	var problems []string
	for _, want := range []string{HandoffModelA, "harness scripted", "calc.go", "incomplete"} {
		if !strings.Contains(cont, want) {
			problems = append(problems, fmt.Sprintf("B's first brief's continuity does not name %q", want))
		}
	}
	if len(problems) == 0 {
		h.say("Proof: B's first brief names model %s, its harness, calc.go and the verdict that stopped it.", HandoffModelA)
	}
	return problems
}

// proveGate checks that B's own verify gate, after B's session, said ok.
func (h *handoffRun) proveGate(ctx context.Context, st store.Store, id task.ID) []string {
	vs, err := st.VerdictList(ctx, id)
	if err != nil {
		return []string{err.Error()}
	}
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].SessionID == "" {
			continue // the baseline, before B's session
		}
		if vs[i].Verdict.Status != verify.StatusOK {
			return []string{"B's verify gate said " + vs[i].Verdict.Line()}
		}
		h.say("Proof: B's verify gate said %s.", vs[i].Verdict.Line())
		return nil
	}
	return []string{"B's verify gate never ran after a session"}
}

// proveDirect runs the project's tests itself on B's task branch, in a
// fresh worktree, without the console.
func (h *handoffRun) proveDirect(branch string) []string {
	dir := filepath.Join(h.dir, "machine-b", "check")
	if err := project.Git(h.b, "worktree", "add", "-q", "--detach", dir, branch); err != nil {
		return []string{err.Error()}
	}
	cmd := exec.Command("sh", "-c", project.VerifyCommand)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return []string{fmt.Sprintf("the tests on B's branch are not green (%v):\n%s", err, tailLines(string(out), 8))}
	}
	h.say("Proof: %s on B's branch passes.", project.VerifyCommand)
	return nil
}

// open opens a coordinator on a checkout whose scripted agent follows
// entry for the implement phase, recording its briefs next to the checkout.
func (h *handoffRun) open(root string, entry agent.Entry) (*coord.Opened, error) {
	machine := filepath.Dir(root)
	pace := 40
	if h.opts.Fast {
		pace = 0
	}
	sc := agent.Script{PaceMS: &pace, RecordDir: filepath.Join(machine, "record"),
		Phases: map[task.Phase][]agent.Entry{task.PhaseImplement: {entry}}}
	data, err := json.MarshalIndent(sc, "", "  ")
	if err != nil {
		return nil, err
	}
	script := filepath.Join(machine, "agent-script.json")
	if err := os.WriteFile(script, data, 0o644); err != nil {
		return nil, fmt.Errorf("write the agent's script: %w", err)
	}
	vars := map[string]string{"script": script}
	if h.opts.Self != "" {
		vars["self"] = h.opts.Self
	}
	return coord.Open(coord.OpenParams{Dir: root, Vars: vars, Tweak: h.tweak,
		Settle: 30 * time.Millisecond, SampleEvery: 100 * time.Millisecond})
}

// tweak makes a failing phase fail at once (one attempt) and gives the
// agent the Go toolchain's cache settings.
func (h *handoffRun) tweak(cfg *config.Config) {
	cfg.Lease.MaxAttempts = 1
	cfg.Lease.Tick.Duration = 100 * time.Millisecond
	cfg.Pane = config.Pane{Cols: 100, Rows: 30, History: 10000}
	sp := cfg.Harness["scripted"]
	sp.Env = append(append([]string(nil), sp.Env...), "GOCACHE", "GOPATH", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY", "GOENV")
	if len(h.opts.AgentEnv) > 0 {
		set := map[string]string{}
		for k, v := range sp.SetEnv {
			set[k] = v
		}
		for k, v := range h.opts.AgentEnv {
			set[k] = v
		}
		sp.SetEnv = set
	}
	cfg.Harness["scripted"] = sp
}

func lastVerdict(ctx context.Context, st store.Store, id task.ID) (verify.Verdict, error) {
	vs, err := st.VerdictList(ctx, id)
	if err != nil {
		return verify.Verdict{}, err
	}
	if len(vs) == 0 {
		return verify.Verdict{}, fmt.Errorf("task %s has no verdict", id)
	}
	return vs[len(vs)-1].Verdict, nil
}

// prefixed writes each line to w with prefix in front, so the two
// machines' event logs read apart.
func prefixed(w io.Writer, prefix string) io.Writer {
	return &prefixWriter{w: w, prefix: prefix, bol: true}
}

type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	bol    bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var buf bytes.Buffer
	for _, c := range b {
		if p.bol {
			buf.WriteString(p.prefix)
			p.bol = false
		}
		buf.WriteByte(c)
		if c == '\n' {
			p.bol = true
		}
	}
	if _, err := p.w.Write(buf.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}

// tailLines returns the last n lines of s.
func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
