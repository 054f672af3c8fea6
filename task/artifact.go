package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/orchestra-tui/orchestra-tui/jail"
)

// Paths inside a task's worktree that the worker and the agent must agree on.
// The brief names them from these constants and the worker watches them from
// these constants, so the two halves cannot drift.
const (
	// StateDir is the directory inside a worktree (and at the repo root) that
	// holds orchestra's files. It is git-ignored.
	StateDir = ".orchestra"
	// SentinelPath is the file an agent writes when it has finished a phase.
	SentinelPath = StateDir + "/done"
	// BriefPath is where a harness that takes its brief as a file (the
	// shell harness) finds it; corrections are appended to it.
	BriefPath = StateDir + "/brief.md"
	// MaxArtifactBytes caps an artifact's size.
	MaxArtifactBytes = 1 << 20
)

// ArtifactPath returns the worktree-relative path of phase p's artifact.
func ArtifactPath(p Phase) string { return StateDir + "/" + string(p) + ".json" }

// ArtifactFile returns the base name of phase p's artifact.
func ArtifactFile(p Phase) string { return string(p) + ".json" }

// Schema returns the JSON Schema (draft 2020-12) of phase p's artifact, as
// text. The brief shows exactly this text and the validator compiles exactly
// this text.
func Schema(p Phase) string { return schemas[p] }

// Example returns an artifact for phase p that follows its schema. The brief
// shows it; a test feeds it back to the validator.
func Example(p Phase) string { return examples[p] }

// Job returns the one-paragraph job description of phase p for the brief.
func Job(p Phase) string { return jobs[p] }

var jobs = map[Phase]string{
	PhaseFrame:     "Restate the goal in your own words and list the acceptance checks you will be held to. Change no code.",
	PhaseResearch:  "Read the repository and record what matters for the goal: the files involved, how they work, what the tests expect. Change no code.",
	PhasePlan:      "Write the plan: ordered steps, each naming the files it touches. Change no code.",
	PhaseImplement: "Carry out the accepted plan. Edit the code, run the verify command yourself until it passes, and list the files you changed.",
	PhaseReview:    "Review the change against the goal and the acceptance list. Run the verify command. Say approve or changes, with the issues you found.",
}

var schemas = map[Phase]string{
	PhaseFrame: `{
  "type": "object",
  "required": ["summary", "acceptance"],
  "additionalProperties": false,
  "properties": {
    "summary": {"type": "string", "minLength": 1},
    "acceptance": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
    "constraints": {"type": "array", "items": {"type": "string"}}
  }
}`,
	PhaseResearch: `{
  "type": "object",
  "required": ["summary", "findings"],
  "additionalProperties": false,
  "properties": {
    "summary": {"type": "string", "minLength": 1},
    "findings": {"type": "array", "minItems": 1, "items": {
      "type": "object",
      "required": ["topic", "detail"],
      "additionalProperties": false,
      "properties": {
        "topic": {"type": "string", "minLength": 1},
        "detail": {"type": "string", "minLength": 1},
        "files": {"type": "array", "items": {"type": "string"}}
      }
    }}
  }
}`,
	PhasePlan: `{
  "type": "object",
  "required": ["summary", "steps"],
  "additionalProperties": false,
  "properties": {
    "summary": {"type": "string", "minLength": 1},
    "steps": {"type": "array", "minItems": 1, "items": {
      "type": "object",
      "required": ["title", "files"],
      "additionalProperties": false,
      "properties": {
        "title": {"type": "string", "minLength": 1},
        "files": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
        "detail": {"type": "string"}
      }
    }}
  }
}`,
	PhaseImplement: `{
  "type": "object",
  "required": ["summary", "files_changed"],
  "additionalProperties": false,
  "properties": {
    "summary": {"type": "string", "minLength": 1},
    "files_changed": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
    "tests": {"type": "string"}
  }
}`,
	PhaseReview: `{
  "type": "object",
  "required": ["verdict", "summary"],
  "additionalProperties": false,
  "properties": {
    "verdict": {"enum": ["approve", "changes"]},
    "summary": {"type": "string", "minLength": 1},
    "issues": {"type": "array", "items": {"type": "string"}}
  }
}`,
}

var examples = map[Phase]string{
	PhaseFrame:     `{"summary": "Make Add return the sum of its arguments.", "acceptance": ["go test ./... passes"]}`,
	PhaseResearch:  `{"summary": "Add lives in calc.go and its test in calc_test.go.", "findings": [{"topic": "Add", "detail": "returns a-b instead of a+b", "files": ["calc.go"]}]}`,
	PhasePlan:      `{"summary": "Fix the operator in Add.", "steps": [{"title": "Return a+b", "files": ["calc.go"]}]}`,
	PhaseImplement: `{"summary": "Add now returns a+b.", "files_changed": ["calc.go"], "tests": "go test ./... ok"}`,
	PhaseReview:    `{"verdict": "approve", "summary": "The change meets the acceptance list.", "issues": []}`,
}

var (
	compileOnce sync.Once
	compiled    map[Phase]*jsonschema.Schema
	compileErr  error
)

func compiledSchemas() (map[Phase]*jsonschema.Schema, error) {
	compileOnce.Do(func() {
		compiled = map[Phase]*jsonschema.Schema{}
		c := jsonschema.NewCompiler()
		for _, p := range Phases {
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schemas[p]))
			if err != nil {
				compileErr = fmt.Errorf("schema of %s: %w", p, err)
				return
			}
			url := "mem:///" + ArtifactFile(p)
			if err := c.AddResource(url, doc); err != nil {
				compileErr = err
				return
			}
			s, err := c.Compile(url)
			if err != nil {
				compileErr = err
				return
			}
			compiled[p] = s
		}
	})
	return compiled, compileErr
}

// ValidateArtifactBytes checks data against phase p's schema. The error is a
// *Refusal naming the artifact and the rule it broke.
func ValidateArtifactBytes(p Phase, data []byte) error {
	name := ArtifactPath(p)
	if len(data) > MaxArtifactBytes {
		return Refuse(ReasonArtifactTooLarge, "%s is %d bytes; the cap is %d.", name, len(data), MaxArtifactBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return Refuse(ReasonArtifactNotJSON, "%s: %v.", name, err)
	}
	if dec.More() {
		return Refuse(ReasonArtifactNotJSON, "%s: more than one JSON value.", name)
	}
	schemas, err := compiledSchemas()
	if err != nil {
		return fmt.Errorf("artifact schemas: %w", err)
	}
	s, ok := schemas[p]
	if !ok {
		return Refuse(ReasonUnknownPhase, "no artifact schema for phase %q.", p)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return Refuse(ReasonArtifactNotJSON, "%s: %v.", name, err)
	}
	if err := s.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return Refuse(ReasonArtifactSchema, "%s: %s", name, flattenValidation(ve))
		}
		return Refuse(ReasonArtifactSchema, "%s: %v", name, err)
	}
	return nil
}

// flattenValidation renders the leaf causes of a validation error on one
// line, each as "at /path: message", so the agent can fix them all at once.
func flattenValidation(ve *jsonschema.ValidationError) string {
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			leaves = append(leaves, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(printer())))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(leaves, "; ") + "."
}

// ReadArtifact reads and validates phase p's artifact from the worktree at
// root. It refuses a missing file, a symlink, anything that is not a regular
// file, a path that resolves outside root (through a symlinked directory,
// say), a file over the size cap, invalid JSON and a schema violation, each
// as a *Refusal naming the file and rule. The path is resolved inside root
// only (jail), so nothing outside the worktree is ever read.
func ReadArtifact(root string, p Phase) ([]byte, error) {
	d, err := jail.Open(root)
	if err != nil {
		return nil, fmt.Errorf("open worktree %s: %w", root, err)
	}
	defer d.Close()
	return ReadArtifactIn(d, p)
}

// ReadArtifactIn is ReadArtifact on an open worktree.
func ReadArtifactIn(d *jail.Dir, p Phase) ([]byte, error) {
	rel := ArtifactPath(p)
	fi, err := d.Lstat(rel)
	switch {
	case errors.Is(err, jail.ErrEscape):
		return nil, Refuse(ReasonArtifactOutside, "%s resolves to a path outside the worktree.", rel)
	case errors.Is(err, fs.ErrNotExist):
		return nil, Refuse(ReasonArtifactMissing, "%s does not exist.", rel)
	case err != nil:
		return nil, Refuse(ReasonArtifactNotFile, "%s: %v.", rel, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, Refuse(ReasonArtifactSymlink, "%s is a symlink.", rel)
	case !fi.Mode().IsRegular():
		return nil, Refuse(ReasonArtifactNotFile, "%s is a %s, not a regular file.", rel, fi.Mode().Type())
	case fi.Size() > MaxArtifactBytes:
		return nil, Refuse(ReasonArtifactTooLarge, "%s is %d bytes; the cap is %d.", rel, fi.Size(), MaxArtifactBytes)
	}
	data, err := d.ReadFile(rel, MaxArtifactBytes)
	switch {
	case errors.Is(err, jail.ErrEscape):
		return nil, Refuse(ReasonArtifactOutside, "%s resolves to a path outside the worktree.", rel)
	case errors.Is(err, jail.ErrTooLarge):
		return nil, Refuse(ReasonArtifactTooLarge, "%s is over the cap of %d bytes.", rel, MaxArtifactBytes)
	case err != nil:
		return nil, Refuse(ReasonArtifactNotFile, "%s: %v.", rel, err)
	}
	if err := ValidateArtifactBytes(p, data); err != nil {
		return nil, err
	}
	return data, nil
}
