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

// renderBanner draws the banners in width w: the one set from outside
// (BannerMsg), then the console's own note (the approve message), each as
// a rule, its title and its lines.
func (m *Model) renderBanner(w int) []string {
	var out []string
	if f := m.snap.StoreFault; f != "" {
		// The engine's store failed or does not answer: placement has
		// stopped or paused, which the operator must see while it lasts.
		out = renderOneBanner(m.st, BannerMsg{Title: "Store: " + f, Tone: ToneBad}, w, true)
	}
	if d := m.snap.SteppedDown; d != "" {
		// The engine stepped down (coord/stepdown.go): its agents are
		// frozen until its heartbeat lands again.
		out = append(out, renderOneBanner(m.st, BannerMsg{Title: "Engine: " + d, Tone: ToneBad}, w, true)...)
	}
	if d := dayBudgetBanner(m.snap.Budget); d != "" {
		// The day's budget holds placement (coord/budget.go) until the
		// next day or a raised budget.
		out = append(out, renderOneBanner(m.st, BannerMsg{Title: d, Tone: ToneBad}, w, true)...)
	}
	out = append(out, renderOneBanner(m.st, m.banner, w, false)...)
	return append(out, renderOneBanner(m.st, m.note, w, true)...)
}

// renderOneBanner draws one banner; with wrapLines its lines wrap instead of
// being cut (a sentence the operator must read whole, such as a command).
func renderOneBanner(st styles, b BannerMsg, w int, wrapLines bool) []string {
	if b.Title == "" {
		return nil
	}
	style := st.prompt
	switch b.Tone {
	case ToneOK:
		style = st.ok.Bold(true)
	case ToneBad:
		style = st.refusal
	}
	out := []string{st.sep.Render(strings.Repeat("─", w))}
	for _, l := range wrap(b.Title, w) {
		out = append(out, style.Render(fit(l, w)))
	}
	for _, l := range b.Lines {
		l = ansiSafeLine(l)
		if !wrapLines {
			out = append(out, fit(l, w))
			continue
		}
		for _, wl := range wrap(l, w) {
			out = append(out, fit(wl, w))
		}
	}
	if len(out) > maxBannerLines+1 {
		out = out[:maxBannerLines+1]
	}
	return out
}

// ansiSafeLine drops escape sequences from banner text, which is plain.
func ansiSafeLine(s string) string { return ansi.Strip(s) }
