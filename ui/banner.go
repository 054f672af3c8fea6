package ui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// BannerMsg puts a banner at the bottom of the console, above the status
// line, until another BannerMsg replaces it; one with no Title removes it.
// Something driving the console from outside (the demo's scripted
// operator) says with it what it does, so the operator's own keys stay
// theirs.
type BannerMsg struct {
	// Title is the banner's first line.
	Title string
	// Lines follow the title, one per line, cut to the width.
	Lines []string
	// Tone colours the title.
	Tone Tone
}

// Tone is how a banner's title reads at a glance.
type Tone int

// The tones of a banner.
const (
	ToneInfo Tone = iota
	ToneOK
	ToneBad
)

// maxBannerLines caps the banner so the panes above it keep most of the
// screen.
const maxBannerLines = 6

// renderBanner draws the banner in width w: a rule, the title, its lines.
func (m *Model) renderBanner(w int) []string {
	b := m.banner
	if b.Title == "" {
		return nil
	}
	style := m.st.prompt
	switch b.Tone {
	case ToneOK:
		style = m.st.ok.Bold(true)
	case ToneBad:
		style = m.st.refusal
	}
	out := []string{m.st.sep.Render(strings.Repeat("─", w))}
	for _, l := range wrap(b.Title, w) {
		out = append(out, style.Render(fit(l, w)))
	}
	for _, l := range b.Lines {
		out = append(out, fit(ansiSafeLine(l), w))
	}
	if len(out) > maxBannerLines+1 {
		out = out[:maxBannerLines+1]
	}
	return out
}

// ansiSafeLine drops escape sequences from banner text, which is plain.
func ansiSafeLine(s string) string { return ansi.Strip(s) }
