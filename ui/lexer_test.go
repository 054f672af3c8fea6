package ui

import (
	"io/fs"
	"regexp"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/stretchr/testify/require"
)

// The languages agents change most still highlight with the console's own
// set of lexers: a line of each gives a keyword, a name or a literal
// token, not only plain text, and a file of no known language is plain.
func TestCommonLanguagesHighlight(t *testing.T) {
	t.Parallel()
	for file, line := range map[string]string{
		"calc.go":        "func add(a, b int) int { return a + b }",
		"main.py":        "def add(a, b): return a + b",
		"app.ts":         "export const add = (a: number): number => a + 1;",
		"view.tsx":       "const x = <div className=\"a\">hi</div>;",
		"index.js":       "function add(a, b) { return a + b; }",
		"lib.rs":         "pub fn add(a: i32) -> i32 { a + 1 }",
		"Main.java":      "public class Main { int x = 1; }",
		"calc.c":         "static int add(int a) { return a + 1; }",
		"calc.cpp":       "namespace m { int add(int a) { return a; } }",
		"run.sh":         "if [ -n \"$X\" ]; then echo hi; fi",
		"Dockerfile":     "FROM golang:1.25 AS build",
		"Makefile":       "build: ; go build ./...",
		"README.md":      "run `make` first",
		"config.yaml":    "name: value",
		"data.json":      "{\"a\": 1}",
		"orchestra.toml": "[harness]",
		"query.sql":      "SELECT id FROM tasks WHERE id = 1",
		"index.html":     "<div class=\"a\">hi</div>",
		"style.css":      "body { color: red; }",
		"app.rb":         "def add(a) a + 1 end",
	} {
		lx := lexerFor(file)
		require.NotNil(t, lx, "a lexer for %s", file)
		it, err := lx.Tokenise(nil, line)
		require.NoError(t, err, file)
		coloured := false
		for tok := it(); tok != chroma.EOF; tok = it() {
			if tok.Type != chroma.Text && tok.Type != chroma.TextWhitespace && tok.Type != chroma.Error {
				coloured = true
			}
		}
		require.True(t, coloured, "%s: %q has a coloured token", file, line)
	}
	require.Nil(t, lexerFor("notes.unknownext"), "a file of no known language is shown plain")
	require.Contains(t, highlight(lexerFor("calc.go"), "func f() {}", nil, bgNone, bgNone), "\x1b[",
		"a Go line is drawn in colour")
}

// Every language a lexer embeds (HTML's CSS and JavaScript, a Makefile's
// shell) is in the set: chroma panics on a line that needs a missing one.
func TestEmbeddedLexersFindTheLanguagesTheyUse(t *testing.T) {
	t.Parallel()
	uses := regexp.MustCompile(`lexer="([^"]+)"`)
	paths, err := fs.Glob(codeLexers, "lexers/*.xml")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		def, err := fs.ReadFile(codeLexers, p)
		require.NoError(t, err)
		for _, m := range uses.FindAllStringSubmatch(string(def), -1) {
			require.NotNil(t, codeRegistry().Get(m[1]), "%s uses %s", p, m[1])
		}
	}
	// A line that goes through an embedded language draws.
	require.Contains(t, highlight(lexerFor("index.html"), `<style>body { color: red; }</style>`, nil, bgNone, bgNone), "body")
}
