package session

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Delivery names how a brief reaches a freshly launched agent.
type Delivery string

// Deliveries a harness can use.
const (
	// DeliveryType pastes the brief into the program's prompt, then submits.
	DeliveryType Delivery = "type"
	// DeliveryArg appends the brief to argv as its last element at launch.
	DeliveryArg Delivery = "arg"
	// DeliveryStdin writes the brief and then end-of-file; on a pty that is
	// paste, submit, then ctrl-d.
	DeliveryStdin Delivery = "stdin"
	// DeliveryFile writes the brief to .orchestra/brief.md in the worktree
	// and shows one line in the pane pointing at it. Nothing is ever typed
	// into the program: a shell would run every line of a brief.
	DeliveryFile Delivery = "file"
)

// ResubmitMode names what a resubmit of a stuck pane sends.
type ResubmitMode string

// Resubmit modes a harness can use.
const (
	// ResubmitSubmit re-sends only the submit sequence.
	ResubmitSubmit ResubmitMode = "submit"
	// ResubmitBrief re-pastes the whole brief, then submits.
	ResubmitBrief ResubmitMode = "brief"
	// ResubmitLastInput re-sends the last input that the screen did not
	// answer with any change.
	ResubmitLastInput ResubmitMode = "last-input"
)

// Duration is a time.Duration that TOML writes as text such as "5s".
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("duration %q: %w", string(b), err)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration as Go duration text.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Spec says how to launch and talk to one agent CLI. It is what a
// [harness.NAME] table of orchestra.toml holds.
type Spec struct {
	// Name is the table's key; it is not read from the table itself.
	Name string `toml:"-"`
	// Argv is the exact argument vector; argv[0] is resolved with
	// exec.LookPath in the session's PATH. No shell is involved.
	Argv []string `toml:"argv"`
	// Env is the allow-list of variable names copied from the console's
	// environment. A trailing "*" makes an entry a prefix pattern. Left
	// out (nil), the harness gets DefaultEnv.
	Env []string `toml:"env"`
	// SetEnv holds the harness's own variables.
	SetEnv map[string]string `toml:"set_env"`
	// Delivery says how the brief reaches the program.
	Delivery Delivery `toml:"delivery"`
	// Ready is a regular expression matched against the plain screen text;
	// the program is ready for input once it matches. A harness whose
	// delivery is not "type" may leave it empty: a one-shot agent such as
	// `claude -p` shows no prompt, and its launch is confirmed as soon as
	// it runs (a sealed artifact confirms a launch in any case).
	Ready string `toml:"ready"`
	// Submit is the Go-escaped key sequence that submits a prompt, e.g. "\r".
	Submit string `toml:"submit"`
	// Pending is a regular expression that matches the screen while typed
	// input waits at the prompt unsubmitted (Claude Code's "[Pasted text
	// #1 +81 lines]"). A submitted input counts as taken once the screen
	// changed and Pending does not match; until then the submit key is
	// sent again. Empty: an input counts as taken once written.
	Pending string `toml:"pending"`
	// Queued is a regular expression that matches the screen while the
	// program holds typed input in a queue of its own, to send when its
	// current turn or tool call ends (Claude Code's "Press up to edit
	// queued messages"). Such input was taken: where Queued matches,
	// Pending is not read as input left unsent.
	Queued string `toml:"queued"`
	// SubmitRetries is how many times the submit key is re-sent when the
	// program has not visibly taken an input; 0 means 3.
	SubmitRetries int `toml:"submit_retries"`
	// Quiet is how long the screen must stay unchanged after the ready
	// marker before the launch counts as confirmed.
	Quiet Duration `toml:"quiet"`
	// LaunchTimeout bounds the wait for a confirmed launch.
	LaunchTimeout Duration `toml:"launch_timeout"`
	// OwnGrace is how long after the last input or change of screen the
	// program's own CPU time counts as work (cpu_own.go); 0 means
	// OwnGrace. A lease shorter than a minute (the demo's) wants a
	// shorter one, or a stall behind a spinner keeps it for a minute.
	OwnGrace Duration `toml:"own_grace"`
	// Resubmit says what a resubmit of a stuck pane sends.
	Resubmit ResubmitMode `toml:"resubmit"`
	// Volatile lists regular expressions of screen regions that change
	// without progress (spinners, clocks); they are blanked before screens
	// are compared.
	Volatile []string `toml:"volatile"`
	// Capabilities are free-form tags that placement matches tasks against.
	Capabilities []string `toml:"capabilities"`
	// Capacity is how many sessions of this harness may run at once; 0
	// means no limit of its own.
	Capacity int `toml:"capacity"`
	// Usage names where the program reports the tokens it spent; "" means
	// it reports none the console can read.
	Usage UsageSource `toml:"usage"`
	// Trust names where the program keeps the folders it trusts; the
	// product marks the directory it made for a session trusted there
	// before the program starts (see MarkTrusted). "" marks nothing.
	Trust TrustStore `toml:"trust"`
	// Dialogs are the screens the program may stop at for the operator
	// (dialog.go).
	Dialogs []Dialog `toml:"dialogs"`
	// Limits are how the program shows its provider's usage limit, rate
	// limit, overload or an expired login (limit.go).
	Limits []LimitSign `toml:"limits"`
	// LimitResume is what is typed at a limit's reset to go on in the same
	// conversation ("continue" when empty); LimitResumeSubmit sends only
	// the submit key, which answers a CLI that asks whether to keep trying.
	LimitResume string `toml:"limit_resume"`
	// LimitRetry is a regular expression on a limit's message that says
	// the CLI retries the request by itself (opencode's "[retrying in 1m
	// 22s attempt #1]"): at the reset nothing is typed, the CLI's own retry
	// picks the turn up.
	LimitRetry string `toml:"limit_retry"`
	// Tested is the oldest and the newest version of the program this
	// harness's settings were proven against; `harness check` says whether
	// the installed one is in that range.
	Tested []string `toml:"tested"`
}

// UsageSource names where an agent CLI reports its token usage.
type UsageSource string

// Usage sources a harness can name.
const (
	// UsageClaudeTranscript reads Claude Code's transcript: JSON lines
	// under its config directory's projects/ folder, one file per
	// conversation, found through the session's CLAUDE_CONFIG_DIR or HOME.
	UsageClaudeTranscript UsageSource = "claude-transcript"
)

// Defaults used when a spec leaves a field empty.
const (
	defaultQuiet         = 500 * time.Millisecond
	defaultLaunchTimeout = 30 * time.Second
	defaultSubmit        = "\r"
)

// Expand returns a copy of s with every "{{key}}" in its argv replaced by
// vars[key]. Only argv is touched: task text never reaches argv this way.
func (s Spec) Expand(vars map[string]string) Spec {
	out := s
	out.Argv = make([]string, len(s.Argv))
	for i, a := range s.Argv {
		for k, v := range vars {
			a = strings.ReplaceAll(a, "{{"+k+"}}", v)
		}
		out.Argv[i] = a
	}
	return out
}

// Validate reports every problem with the spec in one error, each naming
// the harness and the field.
func (s Spec) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("harness %q: %s: %s", s.Name, field, fmt.Sprintf(format, args...)))
	}
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		bad("argv", "is empty; give the program to run as its first element")
	}
	switch s.Delivery {
	case DeliveryType, DeliveryArg, DeliveryStdin, DeliveryFile:
	case "":
		bad("delivery", "is empty; use %q, %q, %q or %q", DeliveryType, DeliveryArg, DeliveryStdin, DeliveryFile)
	default:
		bad("delivery", "unknown value %q; use %q, %q, %q or %q", s.Delivery, DeliveryType, DeliveryArg, DeliveryStdin, DeliveryFile)
	}
	switch s.Resubmit {
	case "", ResubmitSubmit, ResubmitBrief, ResubmitLastInput:
	default:
		bad("resubmit", "unknown value %q; use %q, %q or %q", s.Resubmit, ResubmitSubmit, ResubmitBrief, ResubmitLastInput)
	}
	if s.Ready == "" {
		if s.Delivery == DeliveryType {
			bad("ready", "is empty; give a regular expression for the program's prompt (only a harness whose delivery is not %q may leave it out)", DeliveryType)
		}
	} else if _, err := regexp.Compile(s.Ready); err != nil {
		bad("ready", "bad regular expression: %v", err)
	}
	if s.Pending != "" {
		if _, err := regexp.Compile(s.Pending); err != nil {
			bad("pending", "bad regular expression: %v", err)
		}
	}
	if s.Queued != "" {
		if _, err := regexp.Compile(s.Queued); err != nil {
			bad("queued", "bad regular expression: %v", err)
		}
	}
	if len(s.Tested) != 0 && len(s.Tested) != 2 {
		bad("tested", "give the oldest and the newest version tested, as two strings")
	}
	s.validateDialogs(bad)
	s.validateLimits(bad)
	if s.SubmitRetries < 0 {
		bad("submit_retries", "is negative")
	}
	for i, v := range s.Volatile {
		if _, err := regexp.Compile(v); err != nil {
			bad(fmt.Sprintf("volatile[%d]", i), "bad regular expression: %v", err)
		}
	}
	if _, err := unquote(s.Submit); err != nil {
		bad("submit", "%v", err)
	}
	if s.Quiet.Duration < 0 {
		bad("quiet", "is negative")
	}
	if s.LaunchTimeout.Duration < 0 {
		bad("launch_timeout", "is negative")
	}
	if s.OwnGrace.Duration < 0 {
		bad("own_grace", "is negative")
	}
	if !validTrust(s.Trust) {
		bad("trust", "unknown value %q; use one of %q or leave it out", s.Trust, trustStores)
	}
	if s.Usage != "" && !slices.Contains(usageSources, s.Usage) {
		bad("usage", "unknown value %q; use one of %q or leave it out", s.Usage, usageSources)
	}
	if s.Capacity < 0 {
		bad("capacity", "is negative")
	}
	return errors.Join(errs...)
}

// OneShot reports whether the harness gets its brief once, as an argument
// or on its standard input: such a program usually runs one turn and
// exits. Its exit does not by itself end the phase; its artifact and
// sentinel do.
func (s Spec) OneShot() bool { return s.Delivery == DeliveryArg || s.Delivery == DeliveryStdin }

// Types reports whether the harness takes text typed at its prompt (the
// brief, corrections, refusals). A file-delivery harness never does.
func (s Spec) Types() bool { return s.Delivery != DeliveryFile }

// SubmitBytes returns the decoded submit sequence ("\r" when unset).
func (s Spec) SubmitBytes() ([]byte, error) {
	v, err := unquote(s.Submit)
	if err != nil {
		return nil, fmt.Errorf("harness %q: submit: %w", s.Name, err)
	}
	if v == "" {
		v = defaultSubmit
	}
	return []byte(v), nil
}

// quiet returns the spec's quiet period, or the default.
func (s Spec) quiet() time.Duration {
	if s.Quiet.Duration > 0 {
		return s.Quiet.Duration
	}
	return defaultQuiet
}

// LaunchLimit returns the spec's launch timeout, or the default: how long
// a launch may take before it is confirmed.
func (s Spec) LaunchLimit() time.Duration {
	if s.LaunchTimeout.Duration > 0 {
		return s.LaunchTimeout.Duration
	}
	return defaultLaunchTimeout
}

// unquote decodes a Go-escaped string written without its quotes.
func unquote(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	v, err := strconv.Unquote(`"` + s + `"`)
	if err != nil {
		return "", fmt.Errorf("%q is not a Go-escaped string such as \\r or \\x1b[13u", s)
	}
	return v, nil
}
