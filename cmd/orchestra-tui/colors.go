package main

import (
	"strings"

	"github.com/charmbracelet/colorprofile"
)

// consoleColors is the colour profile the console draws with, and whether
// it is forced rather than left to bubbletea's detection. "auto" trusts an
// explicit COLORTERM=truecolor or 24bit even inside tmux or screen, where
// the detection ignores it (tmux drops the variable unless told, so one
// that is set there was set on purpose); NO_COLOR still wins.
func consoleColors(setting string, environ []string) (colorprofile.Profile, bool) {
	switch setting {
	case "truecolor":
		return colorprofile.TrueColor, true
	case "256":
		return colorprofile.ANSI256, true
	case "16":
		return colorprofile.ANSI, true
	}
	var colorterm string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "NO_COLOR":
			if v != "" {
				return 0, false
			}
		case "COLORTERM":
			colorterm = strings.ToLower(v)
		}
	}
	if colorterm == "truecolor" || colorterm == "24bit" {
		return colorprofile.TrueColor, true
	}
	return 0, false
}
