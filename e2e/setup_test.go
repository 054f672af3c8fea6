package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchestra-tui/orchestra-tui/demo/claudecli"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// bundle is a console on a throwaway calc project whose "claude" harness
// runs the real CLI against a scripted model server.
type bundle struct {
	root    string
	home    string // the CLI's HOME, seeded
	srv     *modelstub.Server
	srvBase string // the stub's base URL
	st      *sqlite.Store
	repo    *repo.Repo
	cfg     config.Config
	environ []string
	c       *coord.Coordinator
	stop    func() // stops c and waits until it has
	notices <-chan coord.Notice
	events  []task.Event
}

// claudeSetup builds the project, the stub and the store, inserts one task
// with pipeline p (so its id, and so its worktree, is known before any
// launch), seeds the CLI's home to trust that worktree, and starts the
// coordinator with environ as the console's environment.
func claudeSetup(t *testing.T, rules []modelstub.Rule, tk task.Task, environ []string, tweak func(*config.Config)) (*bundle, task.Task) {
	t.Helper()
	bin := claudecli.Require(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the verify command needs the go tool on PATH")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, project.WriteProject(root))
	b := &bundle{root: root, home: t.TempDir()}

	b.srv = modelstub.New(rules)
	b.srv.Logf = t.Logf
	base, err := b.srv.Start()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.srv.Close()) })

	b.repo, err = repo.Open(root)
	require.NoError(t, err)
	b.st, err = sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	t.Cleanup(func() { b.st.Close() })

	tk, err = coord.Prepare(tk, b.repo, time.Now())
	require.NoError(t, err)
	require.NoError(t, b.st.TaskInsert(context.Background(), signedTask(t, tk)))
	worktree := filepath.Join(b.repo.Root, filepath.FromSlash(repo.WorktreesDir), string(tk.ID))
	require.NoError(t, modelstub.SeedHome(b.home, worktree))

	b.cfg = config.Default()
	// The stub's address and the seeded home are the harness's own
	// variables, not the console's: the console's environment stays as it
	// is and the allow-list decides what else passes.
	h := modelstub.Harness(b.cfg.Harness["claude"], bin, b.home, base)
	// The CLI runs the verify command through its Bash tool; a warm build
	// cache keeps that to a second.
	h.SetEnv["GOCACHE"] = goEnv(t, goBin, "GOCACHE")
	h.SetEnv["GOTOOLCHAIN"] = "local"
	b.cfg.Harness["claude"] = h
	b.cfg.Pane = config.Pane{Cols: 120, Rows: 40}
	b.cfg.Lease.Tick.Duration = 100 * time.Millisecond
	if tweak != nil {
		tweak(&b.cfg)
	}

	b.environ = environ
	b.start(t)
	return b, tk
}

// start runs a fresh coordinator on the bundle's store.
func (b *bundle) start(t *testing.T) {
	t.Helper()
	c, err := coord.New(coord.Params{
		Store: b.st, Repo: b.repo, Config: b.cfg, Environ: b.environ,
		StopGrace: 2 * time.Second, Settle: 50 * time.Millisecond, SampleEvery: 250 * time.Millisecond,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	notices, unsub := c.Subscribe()
	var once sync.Once
	b.c, b.notices, b.stop = c, notices, func() {
		once.Do(func() {
			cancel()
			unsub()
			<-c.Done()
		})
	}
	go func() { _ = c.Run(ctx) }()
	t.Cleanup(b.stop)
}

func goEnv(t *testing.T, goBin, name string) string {
	t.Helper()
	out, err := exec.Command(goBin, "env", name).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// waitEvent reads notices until one event satisfies ok, failing the test
// with the events and the pane seen when the deadline passes first.
func (b *bundle) waitEvent(t *testing.T, id task.ID, d time.Duration, ok func(task.Event) bool) task.Event {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		select {
		case n, open := <-b.notices:
			if !open {
				t.Fatalf("notices closed; events so far:\n%s", b.dump())
			}
			if n.Event == nil {
				continue
			}
			b.events = append(b.events, *n.Event)
			if ok(*n.Event) {
				return *n.Event
			}
		case <-deadline.C:
			screen := ""
			if v, ok := b.c.Pane(id); ok {
				screen = v.Text()
			}
			t.Fatalf("timed out after %s; pane:\n%s\nevents so far:\n%s", d, screen, b.dump())
		}
	}
}

func (b *bundle) dump() string {
	var sb strings.Builder
	for _, e := range b.events {
		sb.WriteString(string(e.Kind))
		if e.Reason != "" {
			sb.WriteString(" [" + string(e.Reason) + "]")
		}
		sb.WriteString(" " + e.Text + "\n")
	}
	return sb.String()
}

func ended(e task.Event) bool {
	return e.Kind == task.EvTaskAwaiting || e.Kind == task.EvTaskFailed || e.Kind == task.EvTaskCancelled
}

// requireAuthorityOrder checks that text holds every brief heading, in
// authority order.
func requireAuthorityOrder(t *testing.T, text string, p task.Phase) {
	t.Helper()
	at := -1
	for _, h := range []string{task.HeadingGoal, task.HeadingAcceptance, task.HeadingDecisions,
		task.HeadingPhase(p), task.HeadingRules, task.HeadingGitState,
		task.HeadingResearch, task.HeadingPlan, task.HeadingContinuity, task.HeadingDeadEnds} {
		i := strings.Index(text, h)
		require.Greater(t, i, at, "heading %q missing or out of order in:\n%s", h, text)
		at = i
	}
}

// barrier returns once the coordinator's loop is running: it answers a
// command only from its loop, after loading the store.
func (b *bundle) barrier(t *testing.T) {
	t.Helper()
	_, err := b.c.Do(context.Background(), coord.Command{Kind: "barrier"})
	require.Error(t, err, "an unknown command is refused")
}
