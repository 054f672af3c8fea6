package verify

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                    string
		out                     string
		passed, failed, skipped int
		ok                      bool
	}{
		{name: "nothing", out: "building...\nall done\n"},
		{name: "empty", out: ""},
		{
			name: "go test verbose",
			out: "=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n    --- PASS: TestB/sub (0.00s)\n--- FAIL: TestB (0.00s)\n" +
				"--- SKIP: TestC (0.00s)\nFAIL\nFAIL\texample.com/m\t0.003s\nFAIL\n",
			passed: 1, failed: 1, skipped: 1, ok: true,
		},
		{
			name:   "go test quiet, packages count as units",
			out:    "ok  \texample.com/m/a\t0.002s\nok  \texample.com/m/b\t(cached)\n?   \texample.com/m/c\t[no test files]\n",
			passed: 2, ok: true,
		},
		{
			name:   "go test quiet failing package",
			out:    "--- FAIL: TestAdd (0.00s)\n    calc_test.go:6: Add(2, 3) = -1, want 5\nFAIL\nFAIL\texample.com/m\t0.002s\nok  \texample.com/m/b\t0.001s\nFAIL\n",
			passed: 1, failed: 1, ok: true,
		},
		{
			name:   "go build failure",
			out:    "# example.com/m\n./calc.go:3:9: undefined: x\nFAIL\texample.com/m [build failed]\nFAIL\n",
			failed: 1, ok: true,
		},
		{
			name:   "node tap",
			out:    "TAP version 13\n# tests 5\n# suites 0\n# pass 3\n# fail 1\n# cancelled 0\n# skipped 1\n# todo 0\n# duration_ms 41.2\n",
			passed: 3, failed: 1, skipped: 1, ok: true,
		},
		{
			name:   "node spec",
			out:    "ℹ tests 4\nℹ pass 4\nℹ fail 0\nℹ skipped 0\n",
			passed: 4, ok: true,
		},
		{
			name:   "pytest",
			out:    "FAILED test_calc.py::test_add - assert -1 == 5\n========== 3 failed, 10 passed, 1 skipped in 0.12s ==========\n",
			passed: 10, failed: 3, skipped: 1, ok: true,
		},
		{
			name:   "pytest with warnings and errors",
			out:    "=== 1 passed, 2 warnings, 1 error in 1.05s (0:00:01) ===\n",
			passed: 1, failed: 1, ok: true,
		},
		{
			name:   "pytest quiet",
			out:    "..F\n1 failed, 2 passed in 0.03s\n",
			passed: 2, failed: 1, ok: true,
		},
		{
			name: "cargo sums crates",
			out: "running 4 tests\ntest result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n" +
				"   Doc-tests calc\ntest result: ok. 2 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out\n",
			passed: 5, failed: 1, skipped: 1, ok: true,
		},
		{name: "plain", out: "12 passed, 0 failed\n", passed: 12, ok: true},
		{name: "plain with skipped", out: "7 passed, 2 failed, 1 skipped", passed: 7, failed: 2, skipped: 1, ok: true},
		{name: "plain with a word", out: "Tests: 3 passed, 1 failed\n", passed: 3, failed: 1, ok: true},
		{name: "jest", out: "Tests:       1 failed, 2 passed, 3 total\r\n", passed: 2, failed: 1, ok: true},
		{name: "prose mentioning passed", out: "the value passed, failed to converge\n"},
		{name: "two words before the colon", out: "Unit tests: 3 passed, 1 failed\n"},
		{name: "unknown item", out: "3 passed, 2 bananas\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, f, s, ok := Parse(tc.out)
			require.Equal(t, []int{tc.passed, tc.failed, tc.skipped}, []int{p, f, s})
			require.Equal(t, tc.ok, ok)
		})
	}
}

// The counts come from the whole stream even when lines arrive split across
// writes, which is how a pipe delivers them.
func TestTailWriterCountsAcrossWrites(t *testing.T) {
	t.Parallel()
	out := "--- PASS: TestA (0.00s)\nok  \texample.com/m\t0.1s\ntest result: ok. 2 passed; 0 failed; 0 ignored\n"
	w := newTailWriter(8)
	for i := 0; i < len(out); i += 3 {
		_, _ = w.Write([]byte(out[i:min(i+3, len(out))]))
	}
	w.finish()
	require.Equal(t, 3, w.count.passed)
	require.Equal(t, out[len(out)-8:], w.tail())
	require.EqualValues(t, len(out), w.total)
}

func TestTailWriterKeepsTail(t *testing.T) {
	t.Parallel()
	w := newTailWriter(10)
	_, _ = w.Write([]byte("abc"))
	require.Equal(t, "abc", w.tail())
	_, _ = w.Write([]byte("defghij"))
	require.Equal(t, "abcdefghij", w.tail())
	_, _ = w.Write([]byte("klm"))
	require.Equal(t, "defghijklm", w.tail())
	_, _ = w.Write([]byte(strings.Repeat("z", 25) + "end"))
	require.Equal(t, "zzzzzzzend", w.tail())
	// A cut through a multi-byte character drops its leftover bytes.
	w = newTailWriter(4)
	_, _ = w.Write([]byte("ab✓xy"))
	require.Equal(t, "xy", w.tail())
}

func TestVerdictLine(t *testing.T) {
	t.Parallel()
	require.Equal(t, "✓ ok · tests green", Verdict{Status: StatusOK}.Line())
	require.Equal(t, "✓ ok · tests green (12 passed)", Verdict{Status: StatusOK, Counted: true, Passed: 12}.Line())
	require.Equal(t, "✗ incomplete · tests failing (3 passed, 1 failed)",
		Verdict{Status: StatusIncomplete, Counted: true, Passed: 3, Failed: 1}.Line())
	require.Equal(t, "✗ incomplete · tests failing (3 passed, 1 failed, 2 skipped)",
		Verdict{Status: StatusIncomplete, Counted: true, Passed: 3, Failed: 1, Skipped: 2}.Line())
	require.Equal(t, "✗ incomplete · tests failing", Verdict{Status: StatusIncomplete}.Line())
	require.Equal(t, "✗ error · command not found (exit 127)",
		Verdict{Status: StatusError, Detail: "command not found\n(exit 127)"}.Line())
	require.Equal(t, "· no verdict yet", Verdict{}.Line())
}

// go test -json: top-level tests count, subtests do not, a package that
// failed to build counts as one failure, and the tail is the text.
func TestTailWriterCountsGoTestJSON(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{"Action":"start","Package":"m/a"}`,
		`{"Action":"run","Package":"m/a","Test":"TestA"}`,
		`{"Action":"output","Package":"m/a","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"run","Package":"m/a","Test":"TestA/sub"}`,
		`{"Action":"pass","Package":"m/a","Test":"TestA/sub"}`,
		`{"Action":"pass","Package":"m/a","Test":"TestA"}`,
		`{"Action":"output","Package":"m/a","Test":"TestB","Output":"    b_test.go:9: boom\n"}`,
		`{"Action":"fail","Package":"m/a","Test":"TestB"}`,
		`{"Action":"skip","Package":"m/a","Test":"TestC"}`,
		`{"Action":"output","Package":"m/a","Output":"FAIL\tm/a\t0.01s\n"}`,
		`{"Action":"fail","Package":"m/a"}`,
		`{"ImportPath":"m/b","Action":"build-output","Output":"b.go:3:1: syntax error\n"}`,
		`{"ImportPath":"m/b","Action":"build-fail"}`,
		`{"Action":"fail","Package":"m/b","FailedBuild":"m/b"}`,
		`{"Action":"pass","Package":"m/c"}`,
		`not json: FAIL`,
	}
	w := newTailWriter(1 << 10)
	_, _ = w.Write([]byte(strings.Join(lines, "\n") + "\n"))
	w.finish()
	require.True(t, w.count.ok)
	require.Equal(t, 1, w.count.passed)
	require.Equal(t, 2, w.count.failed, "TestB and the package that did not build")
	require.Equal(t, 1, w.count.skipped)
	require.Equal(t, "=== RUN   TestA\n    b_test.go:9: boom\nFAIL\tm/a\t0.01s\nb.go:3:1: syntax error\nnot json: FAIL\n", w.tail())

	p, f, s, ok := Parse(strings.Join(lines, "\n"))
	require.Equal(t, []int{1, 2, 1}, []int{p, f, s})
	require.True(t, ok)
}
