package brief

import (
	"fmt"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// at is the fixed clock of every fact in these tests.
var at = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

// fullFacts returns a task with every section filled, at realistic sizes:
// what a brief for the third attempt of an implement phase looks like.
func fullFacts() Facts {
	id := task.ID("01JQ8Z6W3K4M5N6P7Q8R9STVWX")
	t := task.Task{
		ID:    id,
		Title: "Fix Add in the calc package",
		Goal: "Add returns a-b instead of a+b, so every caller that sums prices gets a negative total.\n" +
			"Make Add return the sum of its arguments and keep its signature.\n\n" +
			"# Background\nThe bug came in with the refactor that split calc.go; Sub was copied into Add.",
		Acceptance: []string{
			"go test ./... passes",
			"Add(2, 3) == 5 and Add(-1, 1) == 0",
			"no exported signature changes",
		},
		Verify:   "go test ./...",
		Repo:     "calc",
		Pipeline: task.DefaultPipeline(),
		Harness:  "claude",
		Model:    "opus",
		Phase:    task.PhaseImplement,
		Attempt:  3,
	}
	rules := "# Repository rules\n\n## Testing\nRun `go test ./...` before saying you are done.\n\n" +
		"## Style\n- gofmt everything\n- no new dependencies without asking\n" +
		strings.Repeat("- keep functions short and named after what they do\n", 8)
	screen := strings.Repeat(strings.Repeat(" ", 80)+"\n", 2)
	for i := range 20 {
		screen += fmt.Sprintf("● Running go test ./... (step %02d)%s\n", i, strings.Repeat(" ", 40))
	}
	screen += "--- FAIL: TestAdd (0.00s)\n    calc_test.go:6: Add(2, 3) = -1, want 5\n" + strings.Repeat(strings.Repeat(" ", 80)+"\n", 3)
	return Facts{
		Task:    t,
		Phase:   task.PhaseImplement,
		Attempt: 3,
		Decisions: []store.Decision{
			{ID: "d1", TaskID: id, Text: "Do not touch Sub; it is correct.", Author: "ana", At: at},
			{ID: "d2", TaskID: id, Text: "Also add a table test for Add.\n## Not a heading\nKeep it in calc_test.go.", Author: "ana", At: at.Add(10 * time.Minute)},
			{ID: "d3", TaskID: id, Text: "Use int, not int64, whatever the plan says.", At: at.Add(20 * time.Minute).In(time.FixedZone("CET", 3600))},
		},
		Rules: rules,
		Git: &GitState{
			Branch: "orchestra/01JQ8Z6W", Head: "9f2c1e07d4b35a6c8e1f0a2b3c4d5e6f7a8b9c0d", Base: "4b1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d",
			Dirty: []string{"calc.go"}, Ahead: 1, Behind: 0, Changed: []string{"calc.go", "calc_test.go"},
		},
		Research: []byte(`{"summary": "Add lives in calc.go and its test in calc_test.go.", "findings": [` +
			`{"topic": "Add", "detail": "returns a-b instead of a+b since the split of calc.go", "files": ["calc.go"]},` +
			`{"topic": "tests", "detail": "calc_test.go has one case for Add; it fails today", "files": ["calc_test.go"]},` +
			`{"topic": "callers", "detail": "cart.Total and invoice.Sum call Add in a loop", "files": ["cart/total.go", "invoice/sum.go"]}]}`),
		Plan: []byte(`{"summary": "Fix the operator in Add and cover it with a table test.", "steps": [` +
			`{"title": "Return a+b", "files": ["calc.go"], "detail": "one-character fix"},` +
			`{"title": "Table test for Add", "files": ["calc_test.go"]}]}`),
		Continuity: []Continuity{
			{SessionID: "01JQ8Z7A", Harness: "claude", Model: "sonnet", Attempt: 1, Phase: task.PhaseImplement,
				Ended: "The lease expired: no progress for 10 minutes.", Verdict: "✗ incomplete · tests failing (0 passed, 1 failed)"},
			{SessionID: "01JQ8Z9C", Harness: "claude", Model: "opus", Attempt: 2, Phase: task.PhaseImplement,
				Ended:        task.ReasonArtifactSchema.Sentence(),
				Screen:       screen,
				FilesChanged: []string{"calc.go"},
				Artifacts:    []string{task.ArtifactPath(task.PhaseImplement)},
				Errors: []string{
					".orchestra/implement.json: at /: missing property 'files_changed'.",
					"The phase's artifact file was not written.",
				},
				Verdict: "✗ incomplete · tests failing (1 passed, 1 failed)"},
		},
		DeadEnds: []store.DeadEnd{
			{TaskID: id, Phase: task.PhaseImplement, Attempt: 1, Text: "Changing the test's expectation to -1 instead of fixing Add.", At: at},
			{TaskID: id, Phase: task.PhaseImplement, Attempt: 2, Text: "Rewriting calc.go with int64, which broke cart.Total.", At: at},
		},
	}
}

// emptyFacts returns a task with nothing but what a task must have.
func emptyFacts() Facts {
	return Facts{
		Task: task.Task{
			ID: "01JQ8Z6W3K4M5N6P7Q8R9STVWX", Title: "Fix Add", Verify: "go test ./...",
			Pipeline: task.Pipeline{task.PhasePlan}, Phase: task.PhasePlan,
		},
		Phase:   task.PhasePlan,
		Attempt: 1,
	}
}
