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
