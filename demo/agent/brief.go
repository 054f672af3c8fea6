package agent

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Brief is what the agent reads from a brief: only what task/brief.go names,
// so the brief contract between the renderer and its readers is exercised
// for real every time the demo runs.
type Brief struct {
	Phase    task.Phase
	Artifact string // worktree-relative, slash-separated
	Sentinel string // worktree-relative, slash-separated
	Verify   string // may be empty: then the agent runs nothing
	Task     string
	Attempt  int
	Text     string // the brief as received
}

// ParseBrief reads a brief. It finds the current-phase section by the line
// starting with task.HeadingPhasePrefix and reads the labelled lines in that
// section (up to the next "## " heading). A list bullet or backticks around
// a value are tolerated; anything else missing is an error that says what.
func ParseBrief(text string) (Brief, error) {
	b := Brief{Text: text}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, task.HeadingPhasePrefix) {
			start = i
			break
		}
	}
	if start < 0 {
		return b, fmt.Errorf("no line starts with %q, so the phase is unknown", task.HeadingPhasePrefix)
	}
	ph, err := task.ParsePhase(strings.TrimPrefix(lines[start], task.HeadingPhasePrefix))
	if err != nil {
		return b, fmt.Errorf("current phase heading: %w", err)
	}
	b.Phase = ph

	values := map[string]string{}
	for _, l := range lines[start+1:] {
		if strings.HasPrefix(l, "## ") {
			break
		}
		l = strings.TrimSpace(l)
		l = strings.TrimSpace(strings.TrimLeft(l, "-*"))
		for _, label := range []string{task.LabelArtifact, task.LabelSentinel, task.LabelVerify, task.LabelTask, task.LabelAttempt} {
			if v, ok := strings.CutPrefix(l, label); ok {
				if _, seen := values[label]; !seen {
					values[label] = strings.Trim(strings.TrimSpace(v), "`")
				}
			}
		}
	}

	var errs []error
	b.Artifact, err = localPath(values, task.LabelArtifact)
	errs = append(errs, err)
	b.Sentinel, err = localPath(values, task.LabelSentinel)
	errs = append(errs, err)
	b.Verify = values[task.LabelVerify]
	b.Task = values[task.LabelTask]
	b.Attempt = 1
	if v, ok := values[task.LabelAttempt]; ok {
		n, err := strconv.Atoi(strings.Fields(v + " x")[0])
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("%s %q is not a positive attempt number", task.LabelAttempt, v))
		} else {
			b.Attempt = n
		}
	}
	return b, errors.Join(errs...)
}

// localPath returns the labelled path, which must be relative and stay
// inside the working directory: the agent writes there.
func localPath(values map[string]string, label string) (string, error) {
	v, ok := values[label]
	if !ok || v == "" {
		return "", fmt.Errorf("the current-phase section has no %q line", label)
	}
	if !filepath.IsLocal(filepath.FromSlash(v)) {
		return "", fmt.Errorf("%s %q is not a path inside the working directory", label, v)
	}
	return v, nil
}
