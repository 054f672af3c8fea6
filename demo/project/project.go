// Package project is the demo's throwaway Go project: a calculator with
// genuinely failing tests, written as a git repository. The demo, the
// handoff demo and the end-to-end tests all run their tasks on it. It
// imports nothing of orchestra's, so every package's tests can use it.
package project

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Project files: a calculator whose Add subtracts and whose Mul is missing
// a case, so `go test ./...` fails until both are fixed.
const (
	GoMod = "module example.com/calc\n\ngo 1.21\n"

	CalcBroken = `// Package calc does arithmetic.
package calc

// Add returns the sum of a and b.
func Add(a, b int) int { return a - b }

// Mul returns the product of a and b.
func Mul(a, b int) int {
	if a == 0 {
		return 1
	}
	return a * b
}
`
	// CalcHalf fixes Add only: the tests are still red.
	CalcHalf = `// Package calc does arithmetic.
package calc

// Add returns the sum of a and b.
func Add(a, b int) int { return a + b }

// Mul returns the product of a and b.
func Mul(a, b int) int {
	if a == 0 {
		return 1
	}
	return a * b
}
`
	// CalcFixed fixes both: the tests are green.
	CalcFixed = `// Package calc does arithmetic.
package calc

// Add returns the sum of a and b.
func Add(a, b int) int { return a + b }

// Mul returns the product of a and b.
func Mul(a, b int) int { return a * b }
`
	CalcTest = `package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("Add(2, 3) = %d, want 5", got)
	}
}

func TestMul(t *testing.T) {
	if got := Mul(0, 7); got != 0 {
		t.Fatalf("Mul(0, 7) = %d, want 0", got)
	}
	if got := Mul(3, 4); got != 12 {
		t.Fatalf("Mul(3, 4) = %d, want 12", got)
	}
}

func TestSub(t *testing.T) {
	if got := 7 - 2; got != 5 {
		t.Fatalf("7 - 2 = %d", got)
	}
}
`
	// VerifyCommand is the project's own test command.
	VerifyCommand = "go test -count=1 -v ./..."
	// Goal and acceptance of the demo task.
	Goal = "Make the calc package correct: Add must return the sum and Mul the product, for every input."
)

// Acceptance is the demo task's acceptance list.
var Acceptance = []string{"go test ./... passes", "Add(2, 3) == 5", "Mul(0, 7) == 0"}

// WriteProject creates the calc project in dir as a git repository with one
// commit. Git runs with a fixed identity and without the user's config, so
// the result is the same on every machine.
func WriteProject(dir string) error {
	files := map[string]string{"go.mod": GoMod, "calc.go": CalcBroken, "calc_test.go": CalcTest,
		"AGENTS.md": "# Rules\n\nKeep the public API of package calc unchanged. Run the tests before saying you are done.\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "-A"},
		{"commit", "-q", "-m", "calc: a calculator with bugs"},
	} {
		if err := Git(dir, args...); err != nil {
			return err
		}
	}
	return nil
}

// Git runs git in dir with a fixed identity and no user or system config.
func Git(dir string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=demo", "GIT_AUTHOR_EMAIL=demo@example.com",
		"GIT_COMMITTER_NAME=demo", "GIT_COMMITTER_EMAIL=demo@example.com",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("git %s in %s: %v: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(string(out)))
	}
	return nil
}
