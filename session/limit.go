package session

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LimitKind names why a provider refused to answer for now: weather, not
// a fault of the task. A session showing one waits (the lease held, no
// attempt charged) instead of being flagged stuck.
type LimitKind string

// The kinds of limit a harness can recognise.
const (
	// LimitUsage: the account's usage limit is reached until a reset.
	LimitUsage LimitKind = "usage limit"
	// LimitRate: a rate limit (requests or tokens per minute).
	LimitRate LimitKind = "rate limit"
	// LimitOverloaded: the provider is overloaded; the CLI retries on
	// its own.
	LimitOverloaded LimitKind = "overloaded"
	// LimitLogin: the login expired; only the operator can renew it.
	LimitLogin LimitKind = "login expired"
)

// LimitResumeSubmit as a harness's limit_resume sends only its submit key
// at the reset (Gemini CLI's "1. Keep trying" is the selected answer).
const LimitResumeSubmit = "<submit>"

var limitKinds = []LimitKind{LimitUsage, LimitRate, LimitOverloaded, LimitLogin}

// LimitSign is how a CLI shows one kind of limit on its screen.
type LimitSign struct {
	Kind LimitKind `toml:"kind"`
	// Match is a regular expression on the plain screen text.
	Match string `toml:"match"`
}

// MarshalText writes the sign as orchestra.toml holds it: "KIND: MATCH".
func (l LimitSign) MarshalText() ([]byte, error) { return []byte(string(l.Kind) + ": " + l.Match), nil }

// UnmarshalText reads "KIND: MATCH", split at the first ": ".
func (l *LimitSign) UnmarshalText(b []byte) error {
	kind, match, ok := strings.Cut(string(b), ": ")
	if !ok {
		return fmt.Errorf("limit %q: write it as \"KIND: REGEX\", e.g. \"usage limit: Usage limit reached\"", string(b))
	}
	l.Kind, l.Match = LimitKind(strings.TrimSpace(kind)), match
	return nil
}

// Limit is a limit a screen shows: its kind, the CLI's own words and the
// reset time when the screen gives one (zero otherwise).
type Limit struct {
	Kind  LimitKind
	Text  string
	Reset time.Time
	// Retrying is set when the message says the CLI retries by itself
	// (the harness's limit_retry matched it).
	Retrying bool
}

// LimitOn returns the limit text (a plain screen) shows lowest, and how
// many limit messages it shows in all: a CLI keeps its old error in the
// history above, so a new limit is a count that grew. now dates a reset
// the screen gives as a delay or a clock time.
func (s Spec) LimitOn(text string, now time.Time) (l Limit, n int, ok bool) {
	at := -1
	for _, sign := range s.Limits {
		re, err := dialogRe(sign.Match)
		if err != nil {
			continue
		}
		locs := re.FindAllStringIndex(text, -1)
		n += len(locs)
		if len(locs) == 0 {
			continue
		}
		if loc := locs[len(locs)-1]; loc[0] > at {
			at = loc[0]
			l = Limit{Kind: sign.Kind}
			// The message: its line and the next few, as one line.
			start := strings.LastIndexByte(text[:loc[0]], '\n') + 1
			rest := text[start:]
			lines := strings.SplitN(rest, "\n", 4)
			if len(lines) > 3 {
				lines = lines[:3]
			}
			for i, ln := range lines {
				// A box drawn around it (Gemini CLI), a progress bar
				// before it (opencode).
				lines[i] = strings.Trim(ln, "│┃⬝■ \t")
			}
			l.Text = strings.TrimRight(dialogText(strings.Join(lines, "\n")), ". ")
			// The reset is the provider's: a CLI's own retry countdown
			// after its message ("[retrying in 4s") is its backoff.
			// A clock time in parentheses in the retry ("retrying in
			// 1m 3s (1:50pm)", Claude Code's, which retries at the
			// reset) is the reset, when the message names none.
			msg, retry := l.Text, ""
			if s.LimitRetry != "" {
				if re, err := dialogRe(s.LimitRetry); err == nil {
					if loc := re.FindStringIndex(msg); loc != nil {
						l.Retrying, msg, retry = true, msg[:loc[0]], msg[loc[0]:]
					}
				}
			}
			l.Reset = ResetIn(msg, now)
			if m := retryClockRe().FindStringSubmatch(retry); m != nil && l.Reset.IsZero() {
				l.Reset = ResetIn("resets "+m[1], now)
			}
		}
	}
	return l, n, at >= 0
}

// resetUnit is a unit of a delay, the longest spelling first.
const resetUnit = `(hours?|hrs?|minutes?|mins?|seconds?|secs?|h|m|s)`

var (
	// "try again in 1m30s", "retry in 90 seconds", "resets in 2h 5m"
	resetDelayRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(?:in|after)\s+(\d+(?:\.\d+)?\s*` + resetUnit + `(?:[\s,]*(?:and\s+)?\d+(?:\.\d+)?\s*` + resetUnit + `)*)\b`)
	})
	resetPartRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*` + resetUnit) })
	// "resets 3pm", "resets at 15:04", "try again at 5:13 AM"
	resetClockRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(?:resets?|try again at)\s+(?:at\s+)?(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?\s*(am|pm)?\b`)
	})
	// the clock in a CLI's own retry: "(1:50pm)"
	retryClockRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\((\d{1,2}:\d{2}\s*(?:am|pm)?)\)`) })
	// Claude Code's "usage limit reached|1767225600"
	resetEpochRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\|(\d{10})\b`) })
)

// ResetIn reads a reset time from a CLI's limit message: a delay ("try
// again in 1m30s"), a clock time ("resets 3pm", the next such time after
// now) or a Unix time. It returns zero when the message gives none.
func ResetIn(msg string, now time.Time) time.Time {
	if m := resetEpochRe().FindStringSubmatch(msg); m != nil {
		if sec, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			return time.Unix(sec, 0)
		}
	}
	if m := resetDelayRe().FindStringSubmatch(msg); m != nil {
		var d time.Duration
		for _, p := range resetPartRe().FindAllStringSubmatch(m[1], -1) {
			v, _ := strconv.ParseFloat(p[1], 64)
			unit := time.Second
			switch strings.ToLower(p[2])[0] {
			case 'h':
				unit = time.Hour
			case 'm':
				unit = time.Minute
			}
			d += time.Duration(v * float64(unit))
		}
		if d > 0 {
			return now.Add(d)
		}
	}
	if m := resetClockRe().FindStringSubmatch(msg); m != nil && (m[2] != "" || m[4] != "") {
		h, _ := strconv.Atoi(m[1])
		mi, _ := strconv.Atoi(m[2])
		se, _ := strconv.Atoi(m[3])
		switch strings.ToLower(m[4]) {
		case "pm":
			if h < 12 {
				h += 12
			}
		case "am":
			if h == 12 {
				h = 0
			}
		}
		if h > 23 || mi > 59 || se > 59 {
			return time.Time{}
		}
		t := time.Date(now.Year(), now.Month(), now.Day(), h, mi, se, 0, now.Location())
		// A clock with minutes but no seconds names the minute the reset
		// falls in (Codex's "try again at 5:13 AM" for 5:13:02): its end
		// is when the limit is surely gone, and a reset within it is not
		// tomorrow's. An hour alone ("resets 3pm") is the hour itself.
		if m[2] != "" && m[3] == "" {
			t = t.Add(time.Minute)
		}
		if !t.After(now) {
			t = t.AddDate(0, 0, 1)
		}
		return t
	}
	return time.Time{}
}

// validateLimits reports a limit sign of an unknown kind or a bad pattern.
func (s Spec) validateLimits(bad func(field, format string, args ...any)) {
	if s.LimitRetry != "" {
		if _, err := regexp.Compile(s.LimitRetry); err != nil {
			bad("limit_retry", "bad regular expression: %v", err)
		}
	}
	for i, l := range s.Limits {
		known := false
		for _, k := range limitKinds {
			known = known || l.Kind == k
		}
		if !known {
			bad(fmt.Sprintf("limits[%d].kind", i), "unknown kind %q; use one of %q", l.Kind, limitKinds)
		}
		if l.Match == "" {
			bad(fmt.Sprintf("limits[%d].match", i), "is empty; give a regular expression for the limit's message")
		} else if _, err := regexp.Compile(l.Match); err != nil {
			bad(fmt.Sprintf("limits[%d].match", i), "bad regular expression: %v", err)
		}
	}
}
