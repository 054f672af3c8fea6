package config

import "fmt"

// Console configures how the console draws on the operator's terminal.
type Console struct {
	// Colors is how many colours the console draws with: "auto" (what
	// the terminal says: COLORTERM, tmux's RGB or Tc, TERM), or
	// "truecolor", "256" or "16" for a terminal that says less than it
	// can (an ssh hop that drops COLORTERM) or more.
	Colors string `toml:"colors"`
}

// ColorChoices are the values console.colors takes.
var ColorChoices = []string{"auto", "truecolor", "256", "16"}

func (c Console) validate(name string) error {
	for _, v := range ColorChoices {
		if c.Colors == v {
			return nil
		}
	}
	return fmt.Errorf("%s: console.colors is %q; want \"auto\", \"truecolor\", \"256\" or \"16\"", name, c.Colors)
}
