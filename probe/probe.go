// Package probe is the lint for a harness: it launches the harness's
// program in a pty in a scratch directory, the way a session would, and
// reports what a new user needs to know to trust the configuration: the
// binary and its version, whether the ready marker matched and after how
// long, whether the screen then settled, which parts of the screen changed
// while the program sat idle (and whether the harness's volatile patterns
// mask them, with a suggested pattern when not), and whether text typed at
// the prompt was echoed and the submit key taken.
package probe

import (
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/session"
)

// Params says what to probe.
type Params struct {
	// Spec is the harness, already expanded.
	Spec session.Spec
	// Dir is the scratch directory the program runs in.
	Dir string
	// Environ is the console's environment; nil means os.Environ().
	Environ []string
	// Cols and Rows size the pty; zero means 100x30.
	Cols, Rows int
	// Idle is how long the settled screen is watched for changes; zero
	// means 3s.
	Idle time.Duration
	// Type is the probe text typed at the prompt; "" means a default that
	// asks the agent for nothing.
	Type string
	// NoModel leaves out every check that sends a request to the model:
	// the submit of the probe text, and the whole run of a one-shot
	// program (which sends its prompt as it starts).
	NoModel bool
}

// Status is how one check came out.
type Status string

// Statuses.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Check is one line of the report.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Text   string `json:"text"`
	// Suggest holds volatile patterns the harness could add.
	Suggest []string `json:"suggest,omitempty"`
	// Fix says what to do about a failed check, where its text alone
	// does not.
	Fix string `json:"fix,omitempty"`
}

// Report is the whole lint.
type Report struct {
	Harness string  `json:"harness"`
	Binary  string  `json:"binary,omitempty"`
	Version string  `json:"version,omitempty"`
	Checks  []Check `json:"checks"`
	// Screen is the last screen seen, trimmed.
	Screen string `json:"screen,omitempty"`
}

// Green reports whether no check failed.
func (r Report) Green() bool {
	for _, c := range r.Checks {
		if c.Status == Fail {
			return false
		}
	}
	return true
}

// DefaultType is what the probe types at a prompt: text that asks the
// agent for nothing, so submitting it costs at most one short reply.
const DefaultType = "orchestra-tui harness check: this is a test, reply with OK only."

// SendsToModel reports whether a probe of spec sends a request to the
// model: one short reply to the probe text (or a one-shot's whole turn),
// unless NoModel is set or nothing is ever typed into the program.
func (p Params) SendsToModel() bool {
	return !p.NoModel && (p.Spec.Types() || p.Spec.OneShot())
}

// Run probes the harness. It returns an error only when the probe itself
// could not run; everything about the harness is in the report.
func Run(ctx context.Context, p Params) (rep Report, err error) {
	if p.Environ == nil {
		p.Environ = os.Environ()
	}
	if p.Cols <= 0 || p.Rows <= 0 {
		p.Cols, p.Rows = 100, 30
	}
	if p.Idle <= 0 {
		p.Idle = 3 * time.Second
	}
	if p.Type == "" {
		p.Type = DefaultType
	}
	spec := p.Spec
	rep = Report{Harness: spec.Name}
	add := func(name string, st Status, format string, args ...any) *Check {
		rep.Checks = append(rep.Checks, Check{Name: name, Status: st, Text: fmt.Sprintf(format, args...)})
		return &rep.Checks[len(rep.Checks)-1]
	}
	if err := spec.Validate(); err != nil {
		add("config", Fail, "%v", err)
		return rep, nil
	}
	bin, err := session.Resolve(spec, p.Environ, p.Dir)
	if err != nil {
		add("binary", Fail, "%v", err)
		return rep, nil
	}
	rep.Binary = bin
	rep.Version, err = session.Version(ctx, spec, bin, p.Environ, p.Dir)
	c := add("binary", OK, "%s", bin)
	if rep.Version != "" {
		c.Text += " (" + rep.Version + ")"
	}
	if err != nil {
		add("version", Warn, "%v", err)
	} else if st, text := spec.TestedVersion(rep.Version); text != "" {
		add("version", Status(st), "%s", text)
	}

	if spec.OneShot() {
		if p.NoModel {
			add("launch", Skip, "a one-shot program sends its prompt to the model as it starts; left out (--no-model)")
			return rep, nil
		}
		// A one-shot program takes its prompt at launch; give it the
		// probe text so it has something to answer.
		spec.Argv = append(append([]string(nil), spec.Argv...), p.Type)
	}
	// The scratch directory is the product's own, as a task's worktree
	// is: the program is told it trusts it, so no "trust this folder?"
	// dialog stands between the check and the prompt.
	if spec.Trust != "" {
		if err := session.MarkTrusted(spec, p.Environ, p.Dir); err != nil {
			c := add("trust", Fail, "%v", err)
			c.Fix = "the program's own config file could not be updated; mend it, or answer the trust dialog by running the program once in " + p.Dir
			return rep, nil
		}
		add("trust", OK, "the scratch directory is marked trusted (%s)", spec.Trust)
	}
	// How a session's whole process tree is stopped on this machine: a
	// cgroup per session where one is delegated, the process group and
	// the marks otherwise. The probe's session is marked as a task's is,
	// so it uses the same mechanism.
	add("stop", OK, "the whole process tree, through %s", session.TreeMechanism())
	start := time.Now()
	s, err := session.Start(session.Params{Spec: spec, Dir: p.Dir, Cols: p.Cols, Rows: p.Rows, Environ: p.Environ,
		TaskID: "harness-check", SessionID: fmt.Sprintf("check-%d-%d", os.Getpid(), start.UnixNano())})
	if err != nil {
		add("launch", Fail, "%v", err)
		return rep, nil
	}
	defer func() { // rep is the named result: the last screen goes in it
		_ = s.Stop(2 * time.Second)
		rep.Screen = trim(s.View().Text())
	}()
	view := s.View()

	// Ready: when the marker first matched, and when the screen settled.
	var matchedAt time.Duration
	var ready *regexp.Regexp
	if spec.Ready != "" {
		ready = regexp.MustCompile(spec.Ready)
	}
	readyErr := make(chan error, 1)
	go func() { readyErr <- s.WaitReady(ctx) }()
	var werr error
wait:
	for {
		text := view.Text()
		if ready != nil && matchedAt == 0 && ready.MatchString(text) {
			matchedAt = time.Since(start)
		}
		if d, said, ok := spec.DialogOn(text); ok {
			// It waits for a key: no ready marker will match until
			// someone answers, and no edit of orchestra.toml answers it.
			c := add("ready", Fail, "the program stopped at its %s dialog after %s: %s", d.Name, round(time.Since(start)), said)
			c.Fix = dialogFix(d, bin, p.Dir)
			return rep, nil
		}
		select {
		case <-s.Changed():
		case werr = <-readyErr:
			break wait
		}
	}
	settledAt := time.Since(start)
	switch {
	case ready == nil:
		add("ready", OK, "no ready marker (delivery %q): a session is confirmed as soon as it runs", spec.Delivery)
	case werr != nil && matchedAt == 0:
		c := add("ready", Fail, "the ready marker %q never matched: %v Screen: %s", spec.Ready, werr, session.ScreenTail(view.Text(), 4))
		c.Fix = "compare ready in orchestra.toml with the last screen below; if the program waits for an answer there, run it yourself once and answer"
		return rep, nil
	case werr != nil:
		add("ready", OK, "the ready marker matched after %s", round(matchedAt))
		add("settled", Fail, "%v", werr)
		return rep, nil
	default:
		add("ready", OK, "the ready marker matched after %s", round(matchedAt))
		add("settled", OK, "the screen then stayed still for %s (quiet), %s after launch", spec.Quiet.Duration, round(settledAt))
	}
	if spec.OneShot() {
		// Its one turn is running on the probe text; there is no prompt to
		// type at. It should end by itself: a phase ends on what it left.
		t := time.NewTimer(spec.LaunchTimeout.Duration + time.Minute)
		defer t.Stop()
		select {
		case <-s.Done():
			st := OK
			if s.ExitCode() != 0 {
				st = Warn
			}
			add("exit", st, "it answered and exited with code %d, %s after launch", s.ExitCode(), round(time.Since(start)))
		case <-t.C:
			add("exit", Warn, "it was still running %s after launch; screen: %s", round(time.Since(start)), session.ScreenTail(view.Text(), 3))
		case <-ctx.Done():
		}
		return rep, nil
	}

	// Idle: what changes on a screen nobody is typing into.
	idleCheck(s, spec, p.Idle, add)

	if !spec.Types() {
		add("submit", Skip, "delivery %q: nothing is ever typed into this program", spec.Delivery)
		return rep, nil
	}
	typeCheck(ctx, s, spec, p.Type, !p.NoModel, add)
	return rep, nil
}

// dialogFix says how to get past a CLI's dialog for good.
func dialogFix(d session.Dialog, bin, dir string) string {
	switch d.Name {
	case "API key":
		return "run " + bin + " once yourself and answer whether to use the API key in your environment; or leave the key out of the harness's env"
	case "trust this folder":
		return "the scratch directory " + dir + " could not be marked trusted; run " + bin + " there once and trust it"
	case "login":
		return "run " + bin + " once yourself and log in (or give the harness its API key)"
	}
	return "run " + bin + " once yourself and answer its " + d.Name + " screen; the answer is remembered"
}

// idleCheck watches the settled screen for idle and reports the lines
// that changed, masked by the harness's volatile patterns or not. A change
// that happens once (a late warning in a footer, a welcome animation that
// ends) is not what keeps a hung session's lease, so a window with unmasked
// changes is watched once more from where it ended, and only changes seen
// again there are a warning.
func idleCheck(s *session.Session, spec session.Spec, idle time.Duration, add func(string, Status, string, ...any) *Check) {
	volatile, _ := lease.CompileVolatile(spec.Volatile)
	mask := func(line string) string {
		for _, re := range volatile {
			line = re.ReplaceAllString(line, "")
		}
		return strings.TrimSpace(line)
	}
	first := watchIdle(s, idle)
	if len(first) == 0 {
		add("idle", OK, "nothing on the screen changed in %s of idling", idle)
		return
	}
	if masked(first, mask) {
		add("idle", OK, "changed while idle, masked by its volatile patterns: %s", strings.Join(drawnLines(first), ", "))
		return
	}
	again := watchIdle(s, idle)
	switch {
	case len(again) == 0:
		add("idle", OK, "changed once while idle, then nothing in %s more: %s", idle, strings.Join(drawnLines(first), ", "))
		return
	case masked(again, mask):
		add("idle", OK, "changed once while idle, then only as its volatile patterns mask: %s", strings.Join(drawnLines(again), ", "))
		return
	}
	var suggest []string
	for _, i := range slices.Sorted(maps.Keys(again)) {
		if drawn := nonBlank(again[i]); len(drawn) > 0 {
			suggest = append(suggest, "volatile = ["+tomlQuote(Suggest(drawn))+"]")
		}
	}
	c := add("idle", Warn, "changed while idle and not masked, so it would count as progress and keep a hung session's lease: %s", strings.Join(drawnLines(again), ", "))
	c.Suggest = suggest
}

// watchIdle watches the screen for idle from now and returns, per line
// that changed, the distinct texts it was drawn as (trimmed, the first
// being how it looked at the start).
func watchIdle(s *session.Session, idle time.Duration) map[int][]string {
	view := s.View()
	first := view.Text()
	variants := map[int][]string{}
	note := func(text string) {
		a, b := strings.Split(first, "\n"), strings.Split(text, "\n")
		for i := 0; i < len(a) && i < len(b); i++ {
			if a[i] == b[i] {
				continue
			}
			seen := variants[i]
			if len(seen) == 0 {
				seen = append(seen, strings.TrimSpace(a[i]))
			}
			line := strings.TrimSpace(b[i])
			if !contains(seen, line) {
				seen = append(seen, line)
			}
			variants[i] = seen
		}
	}
	t := time.NewTimer(idle)
	defer t.Stop()
	for {
		select {
		case <-s.Changed():
			note(view.Text())
		case <-s.Done():
			return variants
		case <-t.C:
			return variants
		}
	}
}

// masked reports whether the volatile patterns blank every way each line
// was drawn alike.
func masked(variants map[int][]string, mask func(string) string) bool {
	for _, seen := range variants {
		for _, v := range seen {
			if mask(v) != mask(seen[0]) {
				return false
			}
		}
	}
	return true
}

// nonBlank is seen without its blank texts: a line that was blank is not
// a variant to match.
func nonBlank(seen []string) []string {
	var drawn []string
	for _, v := range seen {
		if v != "" {
			drawn = append(drawn, v)
		}
	}
	return drawn
}

// drawnLines is each changed line's last non-blank text, quoted.
func drawnLines(variants map[int][]string) []string {
	var lines []string
	for _, i := range slices.Sorted(maps.Keys(variants)) {
		if drawn := nonBlank(variants[i]); len(drawn) > 0 {
			lines = append(lines, fmt.Sprintf("%q", drawn[len(drawn)-1]))
		}
	}
	return lines
}

// typeCheck types the probe text at the prompt, checks the screen shows
// it, submits it and checks the program reacted. A program that shows a
// paste as a placeholder gets a suggested pending pattern when the harness
// has none, so its deliveries can be confirmed.
func typeCheck(ctx context.Context, s *session.Session, spec session.Spec, text string, submitIt bool, add func(string, Status, string, ...any) *Check) {
	view := s.View()
	before := view.Text()
	start := time.Now()
	if err := s.Paste(text); err != nil {
		add("echo", Fail, "typing at the prompt: %v", err)
		return
	}
	if !waitChange(ctx, s, before, 5*time.Second) {
		add("echo", Warn, "nothing typed at the prompt showed within 5s; screen: %s", session.ScreenTail(view.Text(), 3))
		return
	}
	typed := view.Text()
	probe := text[:min(len(text), 20)]
	if strings.Contains(typed, probe) {
		add("echo", OK, "text typed at the prompt showed after %s", round(time.Since(start)))
	} else {
		c := add("echo", OK, "text typed at the prompt showed as %s after %s", changedLine(before, typed), round(time.Since(start)))
		if spec.Pending == "" {
			c.Status = Warn
			c.Text += "; without a pending pattern a submit key the program drops goes unnoticed"
			c.Suggest = []string{"pending = " + tomlQuote(Suggest([]string{strings.TrimSpace(changedLine(before, typed))}))}
		}
	}
	submit := spec.Submit
	if submit == "" {
		submit = `\r`
	}
	if !submitIt {
		add("submit", Skip, "not sent (--no-model): submitting the probe text sends one request to the model")
		return
	}
	start = time.Now()
	if err := s.SubmitChecked(ctx); err != nil {
		add("submit", Fail, "%v", err)
		return
	}
	if !waitChange(ctx, s, typed, 5*time.Second) {
		add("submit", Warn, "the submit key \"%s\" brought no visible change within 5s", submit)
		return
	}
	add("submit", OK, "the submit key \"%s\" was taken: the screen changed %s after it", submit, round(time.Since(start)))
}

// waitChange waits up to d for the screen to differ from before.
func waitChange(ctx context.Context, s *session.Session, before string, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for s.View().Text() == before {
		select {
		case <-s.Changed():
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// changedLine returns the last line of after that differs from before.
func changedLine(before, after string) string {
	a, b := strings.Split(before, "\n"), strings.Split(after, "\n")
	for i := len(b) - 1; i >= 0; i-- {
		if i >= len(a) || a[i] != b[i] {
			return strings.TrimRight(b[i], " ")
		}
	}
	return ""
}

// tomlQuote quotes s as a TOML literal string when it can, so a regular
// expression needs no extra escaping.
func tomlQuote(s string) string {
	if strings.ContainsAny(s, "'\n") {
		return strconv.Quote(s)
	}
	return "'" + s + "'"
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func round(d time.Duration) time.Duration { return d.Round(10 * time.Millisecond) }

func trim(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}
