package handoff

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// validate checks what the schema cannot (rules across fields, digests,
// paths, the artifacts' own schemas) and returns the first problem, naming
// its JSON path. The schema has already checked every field's shape.
func validate(d Document) *FieldError {
	checks := []func(Document) *FieldError{validateHeader, validateTask, validateSessions,
		validateFiles, validateArtifacts, validateDecisions, validateContinuity, validateDeadEnds, validateRepo}
	for _, c := range checks {
		if fe := c(d); fe != nil {
			return fe
		}
	}
	return nil
}

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

func validateHeader(d Document) *FieldError {
	if d.ExportedAt.IsZero() {
		return fieldErr("exported_at", "missing")
	}
	return nil
}

func validateTask(d Document) *FieldError {
	t := d.Task
	if fe := sizeErr(t); fe != nil {
		return fe
	}
	if err := t.Pipeline.Validate(); err != nil {
		return fieldErr("task.pipeline", "%v", err)
	}
	if fe := phaseIn(d, "phase_reached", d.PhaseReached); fe != nil {
		return fe
	}
	return nil
}

// sizeErr is the task's title, goal or acceptance criterion over its
// limit (task.CheckSizes), named by its JSON path.
func sizeErr(t TaskInfo) *FieldError {
	if len(t.Title) > task.MaxTitleBytes {
		return fieldErr("task.title", "is %d bytes, over the limit of %d bytes for a title", len(t.Title), task.MaxTitleBytes)
	}
	if len(t.Goal) > task.MaxGoalBytes {
		return fieldErr("task.goal", "is %d bytes, over the limit of %d bytes for a goal", len(t.Goal), task.MaxGoalBytes)
	}
	for i, a := range t.Acceptance {
		if len(a) > task.MaxGoalBytes {
			return fieldErr(fmt.Sprintf("task.acceptance[%d]", i), "is %d bytes, over the limit of %d bytes for a criterion", len(a), task.MaxGoalBytes)
		}
	}
	return nil
}

// phaseIn checks that p (a known phase: the schema lists them) is in the
// task's pipeline.
func phaseIn(d Document, field string, p task.Phase) *FieldError {
	if !d.Task.Pipeline.Has(p) {
		return fieldErr(field, "phase %q is not in the task's pipeline %s", p, d.Task.Pipeline)
	}
	return nil
}

func validateSessions(d Document) *FieldError {
	for i, s := range d.Sessions {
		at := fmt.Sprintf("sessions[%d]", i)
		if fe := phaseIn(d, at+".phase", s.Phase); fe != nil {
			return fe
		}
		switch {
		case s.StartedAt.IsZero():
			return fieldErr(at+".started_at", "missing")
		case !s.EndedAt.IsZero() && s.EndedAt.Before(s.StartedAt):
			return fieldErr(at+".ended_at", "is before started_at")
		}
	}
	return nil
}

func validateFiles(d Document) *FieldError {
	return checkPaths("files_changed", d.FilesChanged)
}

func validateArtifacts(d Document) *FieldError {
	seen := map[task.Phase]bool{}
	for i, a := range d.Artifacts {
		at := fmt.Sprintf("artifacts[%d]", i)
		if fe := phaseIn(d, at+".phase", a.Phase); fe != nil {
			return fe
		}
		if seen[a.Phase] {
			return fieldErr(at+".phase", "a second artifact for phase %q", a.Phase)
		}
		seen[a.Phase] = true
		sum := sha256.Sum256([]byte(a.Content))
		if hex.EncodeToString(sum[:]) != a.SHA256 {
			return fieldErr(at+".sha256", "does not match the artifact's content")
		}
		if err := task.ValidateArtifactBytes(a.Phase, []byte(a.Content)); err != nil {
			var r *task.Refusal
			if errors.As(err, &r) {
				return fieldErr(at+".content", "%s", r.Detail)
			}
			return fieldErr(at+".content", "%v", err)
		}
		var content any
		if err := json.Unmarshal([]byte(a.Content), &content); err != nil {
			return fieldErr(at+".content", "%v", err)
		}
		if fe := checkContentPaths(content, at+".content", false); fe != nil {
			return fe
		}
	}
	return nil
}

// checkContentPaths finds the file lists inside an artifact (research
// findings, plan steps and the implement summary name files under "files" or
// "files_changed") and checks each is a repository-relative path.
func checkContentPaths(v any, at string, isFileList bool) *FieldError {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if fe := checkContentPaths(v[k], at+"."+k, k == "files" || k == "files_changed"); fe != nil {
				return fe
			}
		}
	case []any:
		for i, e := range v {
			if fe := checkContentPaths(e, fmt.Sprintf("%s[%d]", at, i), isFileList); fe != nil {
				return fe
			}
		}
	case string:
		if isFileList {
			if reason := pathProblem(v); reason != "" {
				return fieldErr(at, "%s", reason)
			}
		}
	}
	return nil
}

func validateDecisions(d Document) *FieldError {
	seen := map[string]bool{}
	for i, c := range d.Decisions {
		at := fmt.Sprintf("decisions[%d]", i)
		switch {
		case seen[c.ID]:
			return fieldErr(at+".id", "repeats decision %q", c.ID)
		case c.At.IsZero():
			return fieldErr(at+".at", "missing")
		}
		seen[c.ID] = true
	}
	return nil
}

func validateContinuity(d Document) *FieldError {
	c := d.Continuity
	if c == nil {
		return nil
	}
	if fe := phaseIn(d, "continuity.phase", c.Phase); fe != nil {
		return fe
	}
	if fe := checkPaths("continuity.files_changed", c.FilesChanged); fe != nil {
		return fe
	}
	return checkPaths("continuity.artifacts", c.Artifacts)
}

func validateDeadEnds(d Document) *FieldError {
	for i, e := range d.DeadEnds {
		at := fmt.Sprintf("dead_ends[%d]", i)
		if fe := phaseIn(d, at+".phase", e.Phase); fe != nil {
			return fe
		}
	}
	return nil
}

func validateRepo(d Document) *FieldError {
	r := d.Repo
	if r.Branch != "" {
		if reason := refProblem(r.Branch); reason != "" {
			return fieldErr("repo.branch", "%s", reason)
		}
	}
	if r.Origin != "" {
		if reason := originProblem(r.Origin); reason != "" {
			return fieldErr("repo.origin", "%s", reason)
		}
	}
	return nil
}

func checkPaths(field string, paths []string) *FieldError {
	for i, p := range paths {
		if reason := pathProblem(p); reason != "" {
			return fieldErr(fmt.Sprintf("%s[%d]", field, i), "%s", reason)
		}
	}
	return nil
}

// pathProblem says why p is not a repository-relative path, or "". A handoff
// is read on another machine: a path of the exporting machine means nothing
// there and leaks its layout.
func pathProblem(p string) string {
	abs := fmt.Sprintf("%q is an absolute path of the exporting machine; paths must be relative to the repository root", p)
	switch {
	case p == "":
		return "is empty"
	case hasControl(p):
		return fmt.Sprintf("%q contains a control character", p)
	case strings.HasPrefix(p, "/"), strings.HasPrefix(p, `\`), strings.HasPrefix(p, "~"):
		return abs
	case len(p) >= 2 && p[1] == ':' && (p[0]|0x20) >= 'a' && (p[0]|0x20) <= 'z':
		return abs
	}
	for _, marker := range []string{"/home/", "/Users/", "/tmp/", `\Users\`} {
		if strings.Contains(p, marker) {
			return abs
		}
	}
	if slices.Contains(strings.Split(strings.ReplaceAll(p, `\`, "/"), "/"), "..") {
		return fmt.Sprintf("%q climbs out with \"..\"; paths must stay inside the repository", p)
	}
	return ""
}

// refProblem says why b is not a branch name that can be shown safely in a
// suggested command, or "".
func refProblem(b string) string {
	switch {
	case strings.HasPrefix(b, "-"):
		return fmt.Sprintf("%q starts with \"-\"", b)
	case strings.Contains(b, ".."), strings.HasSuffix(b, "/"), strings.HasSuffix(b, ".lock"):
		return fmt.Sprintf("%q is not a valid branch name", b)
	}
	for _, r := range b {
		if unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune("~^:?*[\\", r) {
			return fmt.Sprintf("%q is not a valid branch name", b)
		}
	}
	return ""
}

// originProblem says why o is not an origin URL to carry, or "". A URL with
// a password in it is refused so a token never travels in a handoff file.
func originProblem(o string) string {
	if strings.HasPrefix(o, "-") {
		return fmt.Sprintf("%q starts with \"-\"", o)
	}
	for _, r := range o {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Sprintf("%q contains a space or control character", o)
		}
	}
	if hasCredentials(o) {
		return "carries credentials before the @; a handoff file must never carry them"
	}
	return ""
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

// hasCredentials reports whether an origin URL carries a password, or any
// user part at all over HTTP(S), where the user part is usually a token.
func hasCredentials(o string) bool {
	u, err := url.Parse(o)
	if err != nil || u.User == nil {
		return false
	}
	if _, ok := u.User.Password(); ok {
		return true
	}
	return u.Scheme == "http" || u.Scheme == "https"
}
