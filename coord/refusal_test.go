package coord

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Every reason reaches the operator as its sentence: the event the
// coordinator builds for a reason starts with the sentence the UI shows.
func TestEveryRefusalReasonRendersAsItsSentence(t *testing.T) {
	t.Parallel()
	c := &Coordinator{now: time.Now}
	for _, r := range task.Reasons {
		require.True(t, r.Known(), "reason %q has no sentence", r)
		ev := c.refusalEvent("T1", "S1", r, "Detail.")
		require.Equal(t, task.EvRefusal, ev.Kind)
		require.Equal(t, r, ev.Reason)
		require.True(t, strings.HasPrefix(ev.Text, r.Sentence()), "%q does not start with %q", ev.Text, r.Sentence())
		require.True(t, strings.HasSuffix(ev.Text, " Detail."), ev.Text)
	}
}

// Every reason constant the engine's code names (coord, worker, lease,
// session and task's validator) is one task.Reasons lists, so none can
// reach the operator without its sentence.
func TestEveryReasonTheEngineProducesIsListed(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	consts := map[string]task.Reason{}
	// The reasons are declared in reason.go, in the files of their own
	// groups (reason_weather.go) and in the merge queue's block (merge.go).
	reasonFiles, err := filepath.Glob(filepath.Join("..", "task", "reason*.go"))
	require.NoError(t, err)
	reasonFiles = append(reasonFiles, filepath.Join("..", "task", "merge.go"))
	for _, path := range reasonFiles {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok {
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && strings.HasPrefix(name.Name, "Reason") {
						v, err := strconv.Unquote(lit.Value)
						require.NoError(t, err)
						consts[name.Name] = task.Reason(v)
					}
				}
			}
			return true
		})
	}
	listed := map[task.Reason]bool{}
	for _, r := range task.Reasons {
		listed[r] = true
	}
	used := map[string]bool{}
	for _, dir := range []string{".", "../worker", "../lease", "../session", "../task"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			require.NoError(t, err)
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && id.Name == "task" && strings.HasPrefix(x.Sel.Name, "Reason") && x.Sel.Name != "Reasons" && x.Sel.Name != "Reason" {
						used[x.Sel.Name] = true
					}
				case *ast.Ident:
					if filepath.Base(dir) == "task" && strings.HasPrefix(x.Name, "Reason") && consts[x.Name] != "" {
						used[x.Name] = true
					}
				}
				return true
			})
		}
	}
	require.NotEmpty(t, used)
	for name := range used {
		v, ok := consts[name]
		require.True(t, ok, "task.%s is not a reason constant", name)
		require.True(t, listed[v], "task.%s (%q) is produced but missing from task.Reasons", name, v)
	}
}

// The UI's lease clocks come from the snapshot, computed at read time:
// Remaining counts down, WindowOpensIn reaches zero when the window opens,
// and SinceProgress grows while the pane is still, even though a renewal
// was granted for what it drew before it froze.
func TestSnapshotExposesLeaseClocks(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveStall}},
	}}, func(cfg *config.Config) { cfg.Stuck.After.Duration = 300 * time.Millisecond })
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	b.waitEvent(t, 30*time.Second, kindIs(task.EvBriefDelivered))
	// Flagged stuck: the worker has sampled the final screen, so moving the
	// clock from here on cannot land on a late sample of a change.
	b.waitEvent(t, 10*time.Second, refusalOf(task.ReasonStuck))
	b.barrier(t)
	length, window := b.cfg.Lease.Length.Duration, b.cfg.Lease.Window.Duration

	l1 := b.taskView(t, id).Lease
	require.NotNil(t, l1)
	require.Greater(t, l1.Remaining, length-time.Minute)
	require.LessOrEqual(t, l1.Remaining, length)
	require.InDelta(t, float64(l1.Remaining-window), float64(l1.WindowOpensIn), float64(time.Second))
	require.Less(t, l1.SinceProgress, time.Minute)
	require.Equal(t, b.c.Holder(), l1.Holder)

	b.skew.Add(int64(time.Minute))
	l2 := b.taskView(t, id).Lease
	require.InDelta(t, float64(l1.Remaining-time.Minute), float64(l2.Remaining), float64(time.Second), "remaining counts down")
	require.InDelta(t, float64(l1.WindowOpensIn-time.Minute), float64(l2.WindowOpensIn), float64(time.Second))
	require.InDelta(t, float64(l1.SinceProgress+time.Minute), float64(l2.SinceProgress), float64(time.Second))

	// Into the window: the pane drew since launch, so it is renewed once,
	// but it has been still all along.
	b.skew.Add(int64(length - window))
	renewed := b.waitEvent(t, 10*time.Second, kindIs(task.EvLeaseRenewed))
	require.Equal(t, id, renewed.TaskID)
	b.barrier(t)
	l3 := b.taskView(t, id).Lease
	require.Equal(t, 1, l3.Renewals)
	// The renewal's tick, or a later one (every 100 ms; a loaded machine
	// fits one between the event and the barrier) that found the window
	// closed again.
	require.Contains(t, []string{"renew", "wait"}, l3.LastDecision)
	require.Greater(t, l3.Remaining, length-time.Minute, "a renewal runs a full length from its start")
	require.Greater(t, l3.SinceProgress, length-window, "a frozen pane does not look busy after a renewal")
}
