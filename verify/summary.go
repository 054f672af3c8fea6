package verify

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Parse recognises the summary lines test runners print and returns their
// counts summed over every summary line (cargo prints one per crate, go test
// one per package). ok is false when no summary line was recognised.
//
// Recognised formats:
//   - go test -json (what the gate runs, see GoTestJSON): one pass, fail
//     or skip event per top-level test; a package that failed with no test
//     counted (it did not build) counts as one failure;
//   - go test: top-level "--- PASS:", "--- FAIL:", "--- SKIP:" lines, and
//     "ok  pkg" / "FAIL pkg" lines; a package line with no test lines before
//     it (go test without -v, or a build failure) counts as one unit itself;
//   - node --test: "# pass N", "# fail N", "# skipped N" (TAP reporter) and
//     the same with "ℹ" (spec reporter); "cancelled" counts as failed;
//   - pytest: "== 3 failed, 10 passed, 1 skipped in 0.12s ==" and the -q form
//     without the rules; errors count as failed;
//   - cargo test: "test result: FAILED. 3 passed; 1 failed; 0 ignored; …";
//   - plain: "N passed, N failed[, N skipped]", optionally preceded by one
//     word and a colon ("Tests: 3 passed, 1 failed", which also covers jest).
func Parse(output string) (passed, failed, skipped int, ok bool) {
	w := newTailWriter(0)
	_, _ = w.Write([]byte(output))
	w.finish()
	return w.count.passed, w.count.failed, w.count.skipped, w.count.ok
}

// counter accumulates counts line by line. Run feeds it the whole output as
// it streams, so the counts cover everything even though only the tail of
// the output is kept.
type counter struct {
	passed, failed, skipped int
	ok                      bool

	// go test: counts of top-level test lines since the last package line.
	goPass, goFail, goSkip int
	// go test -json: top-level tests counted per package, so a package
	// that failed with no test counted (a build failure) counts as one.
	jsonTests map[string]int
}

// goEvent is one line of go test -json (test2json's TestEvent).
type goEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// goJSON handles one line of go test -json: it counts top-level tests that
// passed, failed or were skipped (subtests are part of their test) and
// returns the text the line carries, which is what go test prints without
// -json. ok is false for a line that is not such an event.
func (c *counter) goJSON(b []byte) (text []byte, ok bool) {
	if len(b) < 2 || b[0] != '{' || !bytes.Contains(b, []byte(`"Action"`)) {
		return nil, false
	}
	// Nearly every line is an output event: take its text without
	// decoding the whole object (test2json writes Output last).
	if bytes.Contains(b, []byte(`"Action":"output"`)) {
		if i := bytes.LastIndex(b, []byte(`,"Output":`)); i >= 0 && b[len(b)-1] == '}' {
			lit := b[i+len(`,"Output":`) : len(b)-1]
			// Go's JSON encoder writes only escapes strconv reads the
			// same way (no \/, no surrogate pairs); anything else takes
			// the full decoder.
			if out, err := strconv.Unquote(string(lit)); err == nil {
				return []byte(out), true
			}
			var out string
			if json.Unmarshal(lit, &out) == nil {
				return []byte(out), true
			}
		}
	}
	var ev goEvent
	if err := json.Unmarshal(b, &ev); err != nil || ev.Action == "" {
		return nil, false
	}
	switch ev.Action {
	case "output", "build-output":
		return []byte(ev.Output), true
	case "pass", "fail", "skip":
	default:
		return nil, true // start, run, pause, cont, bench, build-fail
	}
	if c.jsonTests == nil {
		c.jsonTests = map[string]int{}
	}
	if ev.Test == "" {
		// The package's own result. One that failed with no test
		// counted did not build, or failed outside any test (TestMain,
		// a panic in init): count it as one failure so the verdict is
		// not "0 passed".
		if ev.Action == "fail" && c.jsonTests[ev.Package] == 0 {
			c.failed++
		}
		c.ok = true
		return nil, true
	}
	if strings.Contains(ev.Test, "/") {
		return nil, true
	}
	c.jsonTests[ev.Package]++
	switch ev.Action {
	case "pass":
		c.passed++
	case "fail":
		c.failed++
	case "skip":
		c.skipped++
	}
	c.ok = true
	return nil, true
}

// line classifies one line of output. It dispatches on cheap prefix checks
// first because a flood of millions of lines passes through here.
func (c *counter) line(b []byte) {
	b = bytes.TrimRight(b, "\r")
	if len(b) == 0 {
		return
	}
	switch b[0] {
	case '-':
		c.goTestLine(b)
		return
	case 'o', 'F':
		if c.goPackageLine(b) {
			return
		}
	case 't':
		if c.cargoLine(b) {
			return
		}
	case '#':
		c.nodeLine(bytes.TrimSpace(b[1:]))
		return
	}
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return
	}
	if bytes.HasPrefix(t, []byte("ℹ")) {
		c.nodeLine(bytes.TrimSpace(t[len("ℹ"):]))
		return
	}
	// The list forms all mention passed or failed; skip the rest cheaply.
	if !bytes.Contains(t, []byte(" passed")) && !bytes.Contains(t, []byte(" failed")) &&
		!bytes.Contains(t, []byte(" error")) {
		return
	}
	c.listLine(string(t))
}

func (c *counter) goTestLine(b []byte) {
	switch {
	case bytes.HasPrefix(b, []byte("--- PASS: ")):
		c.goPass++
	case bytes.HasPrefix(b, []byte("--- FAIL: ")):
		c.goFail++
	case bytes.HasPrefix(b, []byte("--- SKIP: ")):
		c.goSkip++
	default:
		return
	}
	c.ok = true
}

// goPackageLine handles "ok  \tpkg\t0.01s" and "FAIL\tpkg [build failed]".
// The bare "FAIL" / "ok" words go test also prints are not package lines.
func (c *counter) goPackageLine(b []byte) bool {
	var pass bool
	var rest []byte
	switch {
	case bytes.HasPrefix(b, []byte("ok ")) || bytes.HasPrefix(b, []byte("ok\t")):
		pass, rest = true, b[2:]
	case bytes.HasPrefix(b, []byte("FAIL ")) || bytes.HasPrefix(b, []byte("FAIL\t")):
		rest = b[4:]
	default:
		return false
	}
	fields := bytes.Fields(rest)
	if len(fields) == 0 || !looksLikePackage(fields[0]) {
		return false
	}
	if c.goPass+c.goFail+c.goSkip == 0 {
		// No test lines: go test without -v, or a package that did not
		// build. Count the package as one unit so the verdict is not empty.
		if pass {
			c.goPass = 1
		} else {
			c.goFail = 1
		}
	}
	c.passed += c.goPass
	c.failed += c.goFail
	c.skipped += c.goSkip
	c.goPass, c.goFail, c.goSkip = 0, 0, 0
	c.ok = true
	return true
}

// looksLikePackage reports whether f could be an import path: no spaces (by
// construction), at least one letter, only path characters.
func looksLikePackage(f []byte) bool {
	for _, r := range string(f) {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("./-_~+", r):
		default:
			return false
		}
	}
	return true
}

var cargoPrefix = []byte("test result: ")

// cargoLine handles "test result: FAILED. 3 passed; 1 failed; 0 ignored; …".
func (c *counter) cargoLine(b []byte) bool {
	if !bytes.HasPrefix(b, cargoPrefix) {
		return false
	}
	s := string(b[len(cargoPrefix):])
	dot := strings.IndexByte(s, '.')
	if dot < 0 || (s[:dot] != "ok" && s[:dot] != "FAILED") {
		return false
	}
	var p, f, sk int
	seen := false
	for item := range strings.SplitSeq(s[dot+1:], ";") {
		n, word, ok := countItem(item)
		if !ok {
			continue
		}
		switch word {
		case "passed":
			p, seen = n, true
		case "failed":
			f, seen = n, true
		case "ignored":
			sk = n
		}
	}
	if !seen {
		return false
	}
	c.passed += p
	c.failed += f
	c.skipped += sk
	c.ok = true
	return true
}

// nodeLine handles the counters node --test prints at the end of a run,
// with the leading "#" or "ℹ" already removed: "pass 3", "fail 1".
func (c *counter) nodeLine(b []byte) {
	word, num, found := bytes.Cut(b, []byte(" "))
	if !found {
		return
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(num)))
	if err != nil || n < 0 {
		return
	}
	switch string(word) {
	case "pass":
		c.passed += n
	case "fail", "cancelled":
		c.failed += n
	case "skipped":
		c.skipped += n
	default:
		return
	}
	c.ok = true
}

// listLine handles the comma separated forms of pytest, jest and the plain
// "N passed, N failed" line. Every item must be a known "N word" pair, so a
// sentence that merely mentions "passed" is not mistaken for a summary.
func (c *counter) listLine(s string) {
	s = strings.Trim(s, "= ")
	if i := strings.LastIndex(s, " in "); i >= 0 && isDuration(s[i+4:]) {
		s = s[:i]
	}
	if word, rest, found := strings.Cut(s, ":"); found && isWord(word) {
		s = strings.TrimSpace(rest)
	}
	var p, f, sk int
	seen := false
	for item := range strings.SplitSeq(s, ",") {
		n, word, ok := countItem(item)
		if !ok {
			return
		}
		switch word {
		case "passed", "xpassed":
			p += n
			seen = true
		case "failed", "error", "errors":
			f += n
			seen = true
		case "skipped", "xfailed", "pending", "todo":
			sk += n
		case "deselected", "warning", "warnings", "total", "rerun":
		default:
			return
		}
	}
	if !seen {
		return
	}
	c.passed += p
	c.failed += f
	c.skipped += sk
	c.ok = true
}

// countItem parses " 3 passed" into 3 and "passed".
func countItem(item string) (int, string, bool) {
	num, word, found := strings.Cut(strings.TrimSpace(item), " ")
	if !found {
		return 0, "", false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return 0, "", false
	}
	return n, strings.TrimSpace(word), true
}

// isWord reports whether s is one word of letters (the "Tests" in
// "Tests: 3 passed, 1 failed").
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// isDuration reports whether s looks like pytest's "0.12s", optionally
// followed by " (0:00:01)".
func isDuration(s string) bool {
	s, _, _ = strings.Cut(s, " ")
	s, found := strings.CutSuffix(s, "s")
	if !found {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}
