package ui

import (
	_ "embed"
	"path"
	"strings"
	"sync"

	"charm.land/lipgloss/v2"
	"github.com/alecthomas/chroma/v2"

	"github.com/orchestra-tui/orchestra-tui/diff"
)

// githubDark is chroma's github-dark theme (its styles/github-dark.xml,
// MIT, Copyright (C) 2017 Alec Thomas), kept here so that no process of
// this binary pays for chroma's styles package: its init parses every one
// of its 70 themes, about 14 ms of CPU in each process, the one-shot
// commands' too.
//
//go:embed github-dark.xml
var githubDark string

// codeStyle is the chroma theme the Diff tab colours code with: a dark one,
// as the console's own colours are chosen for a dark terminal. It is
// parsed on the first diff drawn.
var codeStyle = sync.OnceValue(func() *chroma.Style {
	s, err := chroma.NewXMLStyle(strings.NewReader(githubDark))
	if err != nil {
		panic("ui: the embedded github-dark theme: " + err.Error()) // a file of this package
	}
	return s
})

// bg is the background a run of code is drawn on: none for context, a
// dark tint for a changed line and a brighter one for the words that
// changed in it.
type bg int

const (
	bgNone bg = iota
	bgAdd
	bgAddWord
	bgDel
	bgDelWord
)

// bgStyles are built on the first diff drawn, not at init: every process
// of the binary links this package, one-shot commands included.
var bgStyles = sync.OnceValue(func() [bgDelWord + 1]lipgloss.Style {
	return [...]lipgloss.Style{
		bgNone:    lipgloss.NewStyle(),
		bgAdd:     lipgloss.NewStyle().Background(lipgloss.Color("#12301e")),
		bgAddWord: lipgloss.NewStyle().Background(lipgloss.Color("#2a6b3c")),
		bgDel:     lipgloss.NewStyle().Background(lipgloss.Color("#3a1a1e")),
		bgDelWord: lipgloss.NewStyle().Background(lipgloss.Color("#8a2c36")),
	}
})

// lexerCache maps a file name's extension (or base name, without one) to
// its lexer: chroma's Match walks every lexer's patterns.
var lexerCache sync.Map

// lexerFor is the chroma lexer for a file, by its name; nil when the
// console knows no language for it (the text is then shown plain).
func lexerFor(file string) chroma.Lexer {
	key := path.Ext(file)
	if key == "" {
		key = path.Base(file)
	}
	if l, ok := lexerCache.Load(key); ok {
		lx, _ := l.(chroma.Lexer)
		return lx
	}
	var lx chroma.Lexer
	if l := codeRegistry().Match(path.Base(file)); l != nil {
		lx = chroma.Coalesce(l)
	}
	lexerCache.Store(key, lx)
	return lx
}

// tokenStyles holds one lipgloss style per token type and background, built
// once: a diff of a few thousand lines renders each token with a lookup.
var tokenStyles sync.Map

type tokenKey struct {
	t  chroma.TokenType
	bg bg
}

func styleFor(t chroma.TokenType, on bg) lipgloss.Style {
	key := tokenKey{t, on}
	if s, ok := tokenStyles.Load(key); ok {
		return s.(lipgloss.Style)
	}
	e := codeStyle().Get(t)
	s := bgStyles()[on]
	if e.Colour.IsSet() {
		s = s.Foreground(lipgloss.Color(e.Colour.String()))
	}
	if e.Bold == chroma.Yes {
		s = s.Bold(true)
	}
	if e.Italic == chroma.Yes {
		s = s.Italic(true)
	}
	tokenStyles.Store(key, s)
	return s
}

// highlight colours one line of code by its tokens, its marked words on
// markBg and the rest on lineBg. Tabs become four spaces and other control
// characters are dropped, so a line of foreign text cannot restyle the
// console or move its cursor.
func highlight(lx chroma.Lexer, text string, marks []diff.Span, line, mark bg) string {
	var b strings.Builder
	emit := func(t chroma.TokenType, s string, off int) {
		for s != "" {
			st, n := line, len(s)
			for _, m := range marks {
				switch {
				case off >= m.Start && off < m.End:
					st, n = mark, min(n, m.End-off)
				case m.Start > off:
					n = min(n, m.Start-off)
				}
			}
			b.WriteString(styleFor(t, st).Render(cleanCode(s[:n])))
			s, off = s[n:], off+n
		}
	}
	if lx == nil {
		emit(chroma.Text, text, 0)
		return b.String()
	}
	it, err := lx.Tokenise(nil, text)
	if err != nil {
		emit(chroma.Text, text, 0)
		return b.String()
	}
	off := 0
	for tok := it(); tok != chroma.EOF; tok = it() {
		v := tok.Value
		// Lexers add a newline at the end of the text they were given.
		if off+len(v) > len(text) {
			v = v[:max(len(text)-off, 0)]
		}
		if v == "" {
			continue
		}
		emit(tok.Type, v, off)
		off += len(v)
	}
	return b.String()
}

// cleanCode is code made safe to draw: tabs as four spaces, no controls.
func cleanCode(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString("    ")
		case r < 0x20 || r == 0x7f:
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
