package lease

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// volatileMask replaces every volatile match, so two screens that differ
// only there hash the same while the layout around them still counts.
const volatileMask = "#"

// defaultVolatile are the parts of an agent's screen that change while it
// does nothing of substance: spinners, elapsed-time counters, clocks and
// token counters. A pane that only ticks these is waiting, not progressing.
var defaultVolatile = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		// Braille spinner glyphs, wherever they are drawn.
		regexp.MustCompile(`[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]`),
		// ASCII spinners at the start of a line, followed by a space or the end.
		regexp.MustCompile(`(?m)^[ \t]*[|/\\-](?:[ \t]|$)`),
		// Elapsed-time counters: "12s", "12.3s", "1m 3s", "1h 2m 3s", "120ms".
		regexp.MustCompile(`\b(?:\d+h ?)?(?:\d+m ?)?\d+(?:\.\d+)?m?s\b`),
		// Clock times: "12:34" and "12:34:56", optionally with am/pm.
		regexp.MustCompile(`\b\d{1,2}:\d{2}(?::\d{2})?(?: ?[AaPp][Mm])?\b`),
		// Token counters that tick while a model streams: "↑ 1.2k tokens".
		regexp.MustCompile(`\b\d+(?:\.\d+)?k? tokens\b`),
	}
})

// CompileVolatile compiles operator-supplied volatile patterns (from the
// harness config), naming the pattern that does not compile.
func CompileVolatile(patterns []string) ([]*regexp.Regexp, error) {
	out := make([]*regexp.Regexp, 0, len(patterns))
	for i, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("volatile pattern %d (%q) does not compile: %w", i+1, p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// ScreenFingerprint returns the sha256 (hex) of a screen's plain text with
// the volatile parts masked: the default patterns and then the given ones.
// Trailing spaces on each line and trailing blank lines are dropped, so a
// resized or repainted but otherwise identical screen hashes the same.
func ScreenFingerprint(text string, volatile []*regexp.Regexp) string {
	for _, re := range defaultVolatile() {
		text = re.ReplaceAllLiteralString(text, volatileMask)
	}
	for _, re := range volatile {
		text = re.ReplaceAllLiteralString(text, volatileMask)
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

// WorktreeEntry formats one changed file as a line for WorktreeFingerprint.
// The worker stats each changed file and passes the lines; a deleted file is
// given with size -1 and a zero mtime.
func WorktreeEntry(path string, size int64, mtime time.Time) string {
	return fmt.Sprintf("%s %d %d", path, size, mtime.UnixNano())
}

// WorktreeFingerprint returns the sha256 (hex) of the worktree's changed
// files, given as "path size mtime" lines (see WorktreeEntry) in any order.
// It is pure: the worker computes the lines, so this stays testable and the
// policy never touches the disk.
func WorktreeFingerprint(entries []string) string {
	sorted := slices.Clone(entries)
	slices.Sort(sorted)
	sum := sha256.Sum256([]byte(strings.Join(sorted, "\n")))
	return hex.EncodeToString(sum[:])
}
