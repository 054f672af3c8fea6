package verify

import (
	"regexp"
	"strings"
	"sync"
)

// failedLine matches the line a test runner prints for one failing test:
// go test's "--- FAIL: TestX (0.01s)", cargo's "test a::b ... FAILED",
// pytest's "FAILED tests/x.py::test_y" and jest's "✕ name".
var failedLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\s*(?:--- FAIL: (\S+)(?: \([^)]*\))?|test (\S+) \.\.\. FAILED|FAILED (\S+)(?: - .*)?|✕ (.+?)(?: \(\d+ ?m?s\))?)\s*$`)
})

// FailedTests names the failing tests in a verify run's output, in order,
// each once, so a brief or an event can say which tests broke.
func FailedTests(output string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range failedLine().FindAllStringSubmatch(output, -1) {
		for _, g := range m[1:] {
			if g = strings.TrimSpace(g); g != "" && !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	return out
}
