package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Limits on what the agent echoes, so a big file or a chatty test run does
// not bury the pane.
const (
	maxDiffLines   = 30
	verifyTailSize = 6
	maxReadFiles   = 3

	// verifyBeat is how often a running verify command shows it runs.
	verifyBeat = time.Second
)

// doPhase follows the script for one brief. It returns exit=true with the
// process status when the script says to crash; a stall never returns.
func (a *agent) doPhase(j job) (code int, exit bool) {
	b, e := j.brief, j.entry
	a.mu.Lock()
	a.current = &j
	a.mu.Unlock()

	who := ""
	if b.Task != "" {
		who = " of task " + b.Task
	}
	a.printf("● Phase %s, attempt %d%s%s\n", b.Phase, b.Attempt, who, e.describe())
	a.pause(2)
	if e.Behave == BehaveStall {
		// Edits come first, so a test can have the stalled attempt leave
		// work behind for the continuity brief to name.
		for _, ed := range e.Edits {
			a.applyEdit(ed)
		}
		if e.AwaitDecision {
			// Set before the spinner is drawn, so a decision that comes
			// after it is seen turns the agent silent at once.
			a.mu.Lock()
			a.awaiting = true
			a.mu.Unlock()
		}
		a.printf("%s %s (1s · esc to interrupt)", spinnerFrames[0], "Thinking…")
		if e.AwaitDecision {
			<-a.decided
		}
		a.stall()
	}
	if e.AwaitDecision {
		// A normal phase that first waits for a human decision: a test
		// holds the agent mid-phase (an engine killed and restarted
		// meanwhile, say) for as long as it needs, then lets it finish.
		a.printf("%s %s\n", spinnerFrames[0], "Waiting for a human decision…")
		<-a.decided
	}
	a.spin("Thinking…", 4)
	if e.Behave == BehaveBuild {
		a.build(e)
	}
	a.readFiles()

	switch e.Behave {
	case BehaveCrash:
		a.print("● Update(…)\n" + styleDel + "✗ scripted crash in the middle of the phase" + styleReset + "\n")
		return CrashExitCode, true
	case BehaveFlood:
		a.flood(e.floodLines())
	}

	edits := e.Edits
	if e.Behave == BehaveHalf && len(edits) > 1 {
		edits = edits[:1]
	}
	for _, ed := range edits {
		a.applyEdit(ed)
		a.pause(3)
	}

	valid, err := e.artifactText(b.Phase)
	if err != nil {
		a.printf("✗ %v\n", err)
		return 0, false
	}
	art := valid
	if e.InvalidFirst {
		art = InvalidArtifact
	}
	// The tests run before the agent says it is done, as the repository
	// rules ask, and only in the phases that change or judge code. Done
	// is the last thing the agent does: the console stops the session
	// soon after the sentinel appears, so anything drawn later would
	// race that stop and make the pane's last screen (and the next
	// brief's continuity) differ from run to run.
	if b.Verify != "" && (b.Phase == task.PhaseImplement || b.Phase == task.PhaseReview) {
		a.verify(b.Verify)
	}
	a.writeResult(b, art, fmt.Sprintf("● Phase %s done (attempt %d).", b.Phase, b.Attempt))
	return 0, false
}

// writeResult writes the artifact and then the sentinel (whose content is
// the phase name), announcing each; the closing line is drawn before the
// sentinel is written, so the sentinel is the last thing the phase does.
func (a *agent) writeResult(b Brief, artifact, closing string) {
	if err := a.writeFile(b.Artifact, artifact); err != nil {
		a.printf("✗ %v\n", err)
		return
	}
	a.printf("● Write(%s)\n  ⎿  %d bytes\n", b.Artifact, len(artifact))
	a.pause(2)
	a.printf("● Write(%s)\n%s\n", b.Sentinel, closing)
	if err := a.writeFile(b.Sentinel, string(b.Phase)); err != nil {
		a.printf("✗ %v\n", err)
	}
}

// fixAfterRefusal answers a refusal typed back by the console: it rewrites
// the current phase's artifact with the valid version and the sentinel.
func (a *agent) fixAfterRefusal(text string) {
	a.mu.Lock()
	cur := a.current
	a.mu.Unlock()
	why := strings.TrimSpace(strings.TrimPrefix(text, task.RefusalPrefix))
	if cur == nil {
		a.printf("received refusal, but no phase was worked on yet: %s\n", why)
		return
	}
	a.printf("● Refusal received: %s\n", why)
	a.spin("Fixing the artifact…", 2)
	valid, err := cur.entry.artifactText(cur.brief.Phase)
	if err != nil {
		a.printf("✗ %v\n", err)
		return
	}
	a.writeResult(cur.brief, valid, fmt.Sprintf("● Rewrote %s and %s after the refusal.", cur.brief.Artifact, cur.brief.Sentinel))
}

// build runs e's silent CPU-bound build: a shell's busy loop as a child,
// in the agent's session, until BuildSeconds have passed or BuildUntil
// exists. Nothing is drawn while it runs.
func (a *agent) build(e Entry) {
	a.print("● Bash(make build)\n")
	cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		a.printf("  ⎿  ✗ %v\n", err)
		return
	}
	var deadline <-chan time.Time
	if e.BuildSeconds > 0 {
		t := time.NewTimer(time.Duration(e.BuildSeconds) * time.Second)
		defer t.Stop()
		deadline = t.C
	}
	// The agent's own poll, not the test's: the stop file is a test's
	// event, and the agent has no other way to hear of it.
	poll := time.NewTicker(50 * time.Millisecond)
	defer poll.Stop()
	started := time.Now()
wait:
	for {
		select {
		case <-deadline:
			break wait
		case <-poll.C:
			if e.BuildUntil != "" {
				if _, err := os.Stat(filepath.Join(a.cwd, e.BuildUntil)); err == nil {
					break wait
				}
			}
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	a.printf("  ⎿  build ok (%s)\n", time.Since(started).Round(time.Second))
}

// stall marks the agent stalled and sits silently until the process is
// killed: no more drawing, no more files. Input is still read (so the
// console's writes never block) and logged, but not acted on.
func (a *agent) stall() {
	a.mu.Lock()
	a.stalled = true
	a.mu.Unlock()
	for {
		a.sleep(time.Hour)
	}
}

// readFiles shows the agent "reading" the first few files of the working
// directory, in name order so the output is deterministic.
func (a *agent) readFiles() {
	entries, err := os.ReadDir(a.cwd)
	if err != nil {
		a.printf("✗ read working directory: %v\n", err)
		return
	}
	shown := 0
	for _, de := range entries {
		if shown == maxReadFiles {
			break
		}
		if strings.HasPrefix(de.Name(), ".") || !de.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(a.cwd, de.Name()))
		if err != nil {
			continue
		}
		a.printf("● Read %s\n  ⎿  Read %d lines\n", de.Name(), bytes.Count(data, []byte("\n")))
		a.pause(2)
		shown++
	}
}

// flood prints n lines as fast as the pty takes them.
func (a *agent) flood(n int) {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "  flood %05d/%05d the agent is being very chatty about nothing in particular\n", i, n)
		if i%100 == 0 || i == n {
			a.print(sb.String())
			sb.Reset()
		}
	}
}

// applyEdit writes one file and shows its diff.
func (a *agent) applyEdit(ed Edit) {
	old, err := os.ReadFile(filepath.Join(a.cwd, filepath.FromSlash(ed.Path)))
	verb := "Update"
	if errors.Is(err, fs.ErrNotExist) {
		verb = "Write"
	}
	if err := a.writeFile(ed.Path, ed.Content); err != nil {
		a.printf("✗ %v\n", err)
		return
	}
	diff := udiff.Unified("a/"+ed.Path, "b/"+ed.Path, string(old), ed.Content)
	var sb strings.Builder
	fmt.Fprintf(&sb, "● %s(%s)\n", verb, ed.Path)
	lines := strings.Split(strings.TrimRight(diff, "\n"), "\n")
	for i, l := range lines {
		if i == maxDiffLines {
			fmt.Fprintf(&sb, "    … %d more lines\n", len(lines)-i)
			break
		}
		switch {
		case strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++"):
			l = styleAdd + l + styleReset
		case strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---"):
			l = styleDel + l + styleReset
		}
		sb.WriteString("    " + l + "\n")
	}
	a.print(sb.String())
}

// verify runs the brief's verify command with sh -c in the working
// directory and shows the tail of its output and its status. While the
// command runs, one line redrawn each second counts the beats, as a real
// agent's tool call streams its progress: a test run that compiles for
// longer than the stuck clock (a loaded machine) is work, not a still
// pane. The count is a plain number, not an elapsed time the screen
// fingerprint masks. The line is erased before the output is drawn where
// it stood, as a real agent replaces its progress with the result, so the
// screen the session ends on, which a continuity brief quotes, is the same
// however long the command took.
func (a *agent) verify(command string) {
	a.printf("● Bash(%s)\n", command)
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = a.cwd
	done, beaten := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(beaten)
		tick := time.NewTicker(verifyBeat)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-tick.C:
				a.printf("%s     %s… still running (%d)%s", clearLine, styleDim, n, styleReset)
			}
		}
	}()
	out, err := cmd.CombinedOutput()
	close(done)
	<-beaten
	a.print(clearLine)
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > verifyTailSize {
		lines = lines[len(lines)-verifyTailSize:]
	}
	var sb strings.Builder
	for i, l := range lines {
		lead := "     "
		if i == 0 {
			lead = "  ⎿  "
		}
		sb.WriteString(lead + l + "\n")
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		sb.WriteString("  " + styleAdd + "✓ verify passed" + styleReset + "\n")
	case errors.As(err, &exitErr):
		fmt.Fprintf(&sb, "  %s✗ verify failed (exit status %d)%s\n", styleDel, exitErr.ExitCode(), styleReset)
	default:
		fmt.Fprintf(&sb, "  %s✗ verify could not run: %v%s\n", styleDel, err, styleReset)
	}
	a.print(sb.String())
}

// writeFile writes content to the worktree-relative path rel, creating its
// directories.
func (a *agent) writeFile(rel, content string) error {
	path := filepath.Join(a.cwd, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create directory for %s: %w", rel, err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	return a.rec.wrote(rel)
}
