package modelstub

import (
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Brief is what the stub reads from a brief: the phase and the labelled
// lines of its current-phase section. It finds them by the headings and
// labels in package task, the same constants the brief renderer writes.
type Brief struct {
	Phase    task.Phase
	Artifact string
	Sentinel string
	Verify   string
	// Attempt is the attempt the brief is for (its Attempt line); 0 when
	// the brief does not say.
	Attempt int
	// Index is the position of the brief's message in Request.Messages.
	Index int
}

// FindBrief returns the latest user message of req that carries a
// current-phase heading, parsed.
func FindBrief(req Request) (Brief, bool) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" || !strings.Contains(m.Text, task.HeadingPhasePrefix) {
			continue
		}
		if b, ok := ParseBrief(m.Text); ok {
			b.Index = i
			return b, true
		}
	}
	return Brief{}, false
}

// ParseBrief reads the current-phase section of a brief. The heading may be
// preceded on its line by a tag the CLI wraps pasted text in.
func ParseBrief(text string) (Brief, bool) {
	var b Brief
	in := false
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r ")
		if i := strings.Index(line, task.HeadingPhasePrefix); i >= 0 && !in {
			lead := strings.TrimSpace(line[:i])
			if lead != "" && !strings.HasSuffix(lead, ">") {
				continue
			}
			p, err := task.ParsePhase(strings.TrimSpace(line[i+len(task.HeadingPhasePrefix):]))
			if err != nil {
				continue
			}
			b.Phase, in = p, true
			continue
		}
		if !in {
			continue
		}
		if strings.HasPrefix(line, "## ") {
			break
		}
		t := strings.TrimLeft(line, " -*")
		switch {
		case strings.HasPrefix(t, task.LabelArtifact):
			b.Artifact = labelValue(t, task.LabelArtifact)
		case strings.HasPrefix(t, task.LabelSentinel):
			b.Sentinel = labelValue(t, task.LabelSentinel)
		case strings.HasPrefix(t, task.LabelVerify):
			b.Verify = labelValue(t, task.LabelVerify)
		case strings.HasPrefix(t, task.LabelAttempt):
			b.Attempt, _ = strconv.Atoi(labelValue(t, task.LabelAttempt))
		}
	}
	return b, in
}

// labelValue is the text after label, without the quoting a renderer may
// add for readability.
func labelValue(line, label string) string {
	v := strings.TrimSpace(strings.TrimPrefix(line, label))
	return strings.Trim(v, "`\"")
}

// WorkingDir returns the directory the CLI says it runs in, or "" if the
// request does not say. Claude Code names it in its environment section
// ("Primary working directory: DIR"), Codex in an environment_context
// message ("<cwd>DIR</cwd>").
func (r Request) WorkingDir() string {
	texts := []string{r.System}
	for _, m := range r.Messages {
		texts = append(texts, m.Text)
	}
	for _, t := range texts {
		for _, label := range [][2]string{{"Primary working directory:", "\n"}, {"<cwd>", "</cwd>"}} {
			if i := strings.Index(t, label[0]); i >= 0 {
				rest := t[i+len(label[0]):]
				if j := strings.Index(rest, label[1]); j >= 0 {
					rest = rest[:j]
				}
				return strings.TrimSpace(rest)
			}
		}
	}
	return ""
}

// resolve makes a worktree-relative path absolute against dir, because the
// CLI's file tools want absolute paths. Absolute paths and an unknown dir
// pass through.
func resolve(dir, p string) string {
	if p == "" || dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, filepath.FromSlash(path.Clean(p)))
}
