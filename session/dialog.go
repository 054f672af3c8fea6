package session

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Dialog is a screen an agent CLI shows instead of its prompt and waits
// at for a key: an API key to approve, a folder to trust, a login, an
// update, a theme picker. It is the operator's to answer, not a fault of
// the task: while one shows, the launch's clock stands still and the task
// shows "needs you" with the dialog's own text.
type Dialog struct {
	// Name says what the dialog asks, in a word or two ("API key").
	Name string `toml:"name"`
	// Match is a regular expression on the plain screen text that only
	// the dialog shows.
	Match string `toml:"match"`
}

// MarshalText writes the dialog as orchestra.toml holds it: "NAME: MATCH",
// one string of the harness's dialogs list.
func (d Dialog) MarshalText() ([]byte, error) { return []byte(d.Name + ": " + d.Match), nil }

// UnmarshalText reads "NAME: MATCH", split at the first ": ".
func (d *Dialog) UnmarshalText(b []byte) error {
	name, match, ok := strings.Cut(string(b), ": ")
	if !ok {
		return fmt.Errorf("dialog %q: write it as \"NAME: REGEX\", e.g. \"trust: Trust this folder\\?\"", string(b))
	}
	d.Name, d.Match = strings.TrimSpace(name), match
	return nil
}

// dialogRes caches compiled dialog patterns: specs are values copied
// freely, and a pattern is matched on every screen change of a launch.
var dialogRes sync.Map // pattern -> *regexp.Regexp

func dialogRe(pattern string) (*regexp.Regexp, error) {
	if re, ok := dialogRes.Load(pattern); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	dialogRes.Store(pattern, re)
	return re, nil
}

// DialogOn returns the dialog of spec that text (a plain screen) shows,
// and the dialog's own text: the screen's words on one line, without the
// rules drawn around them. ok is false when no dialog shows, and when the
// ready marker matches: a prompt that shows is no dialog's.
func (s Spec) DialogOn(text string) (d Dialog, said string, ok bool) {
	if len(s.Dialogs) == 0 {
		return Dialog{}, "", false
	}
	if s.Ready != "" {
		if re, err := dialogRe(s.Ready); err == nil && re.MatchString(text) {
			return Dialog{}, "", false
		}
	}
	for _, d := range s.Dialogs {
		re, err := dialogRe(d.Match)
		if err != nil || !re.MatchString(text) {
			continue
		}
		return d, dialogText(text), true
	}
	return Dialog{}, "", false
}

// maxDialogText bounds the dialog text a task's flag and event carry.
const maxDialogText = 400

// dialogText joins the screen's non-blank lines into one, collapsing runs
// of spaces and dropping lines drawn only of box characters.
func dialogText(text string) string {
	var words []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.Trim(l, "─━═-╭╮╰╯│ ") == "" {
			continue
		}
		words = append(words, strings.Fields(l)...)
	}
	out := strings.Join(words, " ")
	if r := []rune(out); len(r) > maxDialogText {
		out = string(r[:maxDialogText-1]) + "…"
	}
	return out
}

// validateDialogs reports a dialog without a name or with a bad pattern.
func (s Spec) validateDialogs(bad func(field, format string, args ...any)) {
	for i, d := range s.Dialogs {
		if strings.TrimSpace(d.Name) == "" {
			bad(fmt.Sprintf("dialogs[%d].name", i), "is empty; say what the dialog asks")
		}
		if d.Match == "" {
			bad(fmt.Sprintf("dialogs[%d].match", i), "is empty; give a regular expression for the dialog's text")
		} else if _, err := regexp.Compile(d.Match); err != nil {
			bad(fmt.Sprintf("dialogs[%d].match", i), "bad regular expression: %v", err)
		}
	}
}
