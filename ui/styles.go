package ui

import "charm.land/lipgloss/v2"

// styles holds every lipgloss style the console uses, built once so a frame
// never allocates a style.
type styles struct {
	header     lipgloss.Style
	dim        lipgloss.Style
	bold       lipgloss.Style
	selected   lipgloss.Style
	tabActive  lipgloss.Style
	tabIdle    lipgloss.Style
	heading    lipgloss.Style
	decisions  lipgloss.Style
	refusal    lipgloss.Style
	ok         lipgloss.Style
	bad        lipgloss.Style
	warn       lipgloss.Style
	focus      lipgloss.Style
	statusErr  lipgloss.Style
	statusInfo lipgloss.Style
	key        lipgloss.Style
	sep        lipgloss.Style
	prompt     lipgloss.Style
}

func newStyles() styles {
	return styles{
		header:     lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("15")).Background(lipgloss.Color("24")),
		dim:        lipgloss.NewStyle().Foreground(lipgloss.Color("245")),
		bold:       lipgloss.NewStyle().Bold(true),
		selected:   lipgloss.NewStyle().Reverse(true),
		tabActive:  lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("0")).Background(lipgloss.Color("45")),
		tabIdle:    lipgloss.NewStyle().Foreground(lipgloss.Color("250")),
		heading:    lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("45")),
		decisions:  lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("0")).Background(lipgloss.Color("214")),
		refusal:    lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("9")),
		ok:         lipgloss.NewStyle().Foreground(lipgloss.Color("10")),
		bad:        lipgloss.NewStyle().Foreground(lipgloss.Color("9")),
		warn:       lipgloss.NewStyle().Foreground(lipgloss.Color("214")),
		focus:      lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("0")).Background(lipgloss.Color("214")),
		statusErr:  lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("9")),
		statusInfo: lipgloss.NewStyle().Foreground(lipgloss.Color("10")),
		key:        lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("45")),
		sep:        lipgloss.NewStyle().Foreground(lipgloss.Color("240")),
		prompt:     lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("214")),
	}
}
