package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Behave names a scripted misbehaviour for one phase attempt.
type Behave string

// The behaviours a script entry can ask for.
const (
	// BehaveNormal does the phase: output, edits, artifact, sentinel, verify.
	BehaveNormal Behave = ""
	// BehaveStall prints a little, then sits silently until killed: what a
	// lease expiry is for. It writes no artifact and no sentinel; the
	// entry's Edits, if any, are applied before it stalls, so the attempt
	// leaves work behind for the next one's continuity.
	BehaveStall Behave = "stall"
	// BehaveIgnoreFirst ignores the first brief entirely (draws nothing) and
	// acts on the next submitted message: a resubmitted brief, or a bare
	// submit, which re-uses the ignored brief. What a resubmit is for.
	BehaveIgnoreFirst Behave = "ignore_first"
	// BehaveCrash exits with status 3 in the middle of the phase.
	BehaveCrash Behave = "crash"
	// BehaveFlood prints FloodLines lines as fast as it can, then does the
	// phase.
	BehaveFlood Behave = "flood"
	// BehaveHalf applies only the first edit, then does the rest of the phase.
	BehaveHalf Behave = "half"
	// BehaveBuild runs a silent CPU-bound build first (a child process
	// that keeps one core busy and prints nothing) for BuildSeconds, or
	// until the file BuildUntil appears, then does the phase: what a long
	// test run behind a spinner is to the stuck flag and the lease.
	BehaveBuild Behave = "build"
)

// CrashExitCode is the status the agent exits with when told to crash.
const CrashExitCode = 3

// defaultPaceMS is the pacing unit when a script does not set one: slow
// enough to look like an agent at work, fast enough for a demo in seconds.
const defaultPaceMS = 40

// defaultFloodLines is how many lines "flood" prints when not told.
const defaultFloodLines = 200

// InvalidArtifact is what invalid_first writes before it is refused: JSON
// that every phase's schema rejects.
const InvalidArtifact = `{"summary": ""}`

// Script tells the scripted agent how to behave in each phase attempt. It is
// read from the JSON file given with --script.
type Script struct {
	// PaceMS is the pacing unit in milliseconds; every delay is a multiple
	// of it and 0 means no delays. Absent means defaultPaceMS.
	PaceMS *int `json:"pace_ms,omitempty"`
	// RecordDir, if set, receives every brief (brief-<phase>-<attempt>-<n>.md)
	// a log of every submitted input (inputs.log), so tests can assert
	// that something arrived exactly once, and a log of every file the
	// agent wrote (writes.log), so a test can tell when it worked.
	// Relative paths are taken from the script file's directory.
	RecordDir string `json:"record_dir,omitempty"`
	// Phases holds the entries of each phase, matched by attempt.
	Phases map[task.Phase][]Entry `json:"phases,omitempty"`
}

// Entry is the script for one phase attempt.
type Entry struct {
	// Attempt is the attempt number (from the brief's Attempt: line) this
	// entry is for; 0 makes it the phase's default.
	Attempt int `json:"attempt,omitempty"`
	// Artifact is the artifact to write instead of task.Example(phase):
	// either a JSON string holding the document or the document itself.
	Artifact json.RawMessage `json:"artifact,omitempty"`
	// InvalidFirst writes InvalidArtifact first and the valid artifact only
	// after a refusal (a message starting with task.RefusalPrefix).
	InvalidFirst bool `json:"invalid_first,omitempty"`
	// Edits are files written (relative to the working directory) before
	// the artifact.
	Edits []Edit `json:"edits,omitempty"`
	// Behave is the misbehaviour, if any.
	Behave Behave `json:"behave,omitempty"`
	// FloodLines is how many lines "flood" prints.
	FloodLines int `json:"flood_lines,omitempty"`
	// BuildSeconds is how long "build" keeps its core busy; BuildUntil, a
	// path relative to the working directory, ends it early when the
	// file appears (a test's event). One of them must be set.
	BuildSeconds int    `json:"build_seconds,omitempty"`
	BuildUntil   string `json:"build_until,omitempty"`
	// AwaitDecision makes a stall wait, after its edits and before it goes
	// silent, until a human decision has arrived and been echoed: the demo
	// shows a correction reaching a live pane that then stops making
	// progress, in that order, whatever the pacing. A normal entry waits
	// for the decision before it starts the phase's work.
	AwaitDecision bool `json:"await_decision,omitempty"`
}

// Edit is one file the agent writes.
type Edit struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// LoadScript reads and checks a script file.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("read agent script: %w", err)
	}
	var s Script
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("agent script %s: %w", path, err)
	}
	if s.RecordDir != "" && !filepath.IsAbs(s.RecordDir) {
		s.RecordDir = filepath.Join(filepath.Dir(path), s.RecordDir)
	}
	if err := s.Validate(); err != nil {
		return Script{}, fmt.Errorf("agent script %s: %w", path, err)
	}
	return s, nil
}

// Validate checks phase names, behaviours, edit paths and artifacts.
func (s Script) Validate() error {
	if s.PaceMS != nil && *s.PaceMS < 0 {
		return fmt.Errorf("pace_ms must not be negative, got %d", *s.PaceMS)
	}
	for ph, entries := range s.Phases {
		if !ph.Valid() {
			return fmt.Errorf("unknown phase %q", ph)
		}
		for i, e := range entries {
			where := fmt.Sprintf("phases.%s[%d]", ph, i)
			switch e.Behave {
			case BehaveNormal, BehaveStall, BehaveIgnoreFirst, BehaveCrash, BehaveFlood, BehaveHalf:
			case BehaveBuild:
				if e.BuildSeconds <= 0 && e.BuildUntil == "" {
					return fmt.Errorf("%s: behave \"build\" needs build_seconds or build_until", where)
				}
				if e.BuildUntil != "" && !filepath.IsLocal(e.BuildUntil) {
					return fmt.Errorf("%s: build_until %q must be relative and stay inside the working directory", where, e.BuildUntil)
				}
			default:
				return fmt.Errorf("%s: unknown behave %q (known: stall, ignore_first, crash, flood, half, build)", where, e.Behave)
			}
			if e.AwaitDecision && e.Behave != BehaveStall && e.Behave != BehaveNormal {
				return fmt.Errorf("%s: await_decision only applies to behave \"stall\" and the normal behaviour", where)
			}
			for _, ed := range e.Edits {
				if !filepath.IsLocal(ed.Path) {
					return fmt.Errorf("%s: edit path %q must be relative and stay inside the working directory", where, ed.Path)
				}
			}
			if _, err := e.artifactText(ph); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
		}
	}
	return nil
}

// pace returns the pacing unit in milliseconds.
func (s Script) pace() int {
	if s.PaceMS == nil {
		return defaultPaceMS
	}
	return *s.PaceMS
}

// entry returns the entry for phase ph, attempt n: the one naming the
// attempt, else the phase's default, else the built-in default (do the
// phase and write the example artifact).
func (s Script) entry(ph task.Phase, n int) Entry {
	var def *Entry
	for i, e := range s.Phases[ph] {
		if e.Attempt == n && n != 0 {
			return e
		}
		if e.Attempt == 0 && def == nil {
			def = &s.Phases[ph][i]
		}
	}
	if def != nil {
		return *def
	}
	return Entry{}
}

// artifactText returns the valid artifact this entry writes for phase ph.
func (e Entry) artifactText(ph task.Phase) (string, error) {
	raw := bytes.TrimSpace(e.Artifact)
	if len(raw) == 0 || string(raw) == "null" {
		return task.Example(ph), nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("artifact: %w", err)
		}
		return s, nil
	}
	return string(raw), nil
}

// floodLines returns how many lines "flood" prints.
func (e Entry) floodLines() int {
	if e.FloodLines > 0 {
		return e.FloodLines
	}
	return defaultFloodLines
}

// describe is the one-line summary shown when a phase starts.
func (e Entry) describe() string {
	var parts []string
	if e.Behave != BehaveNormal {
		parts = append(parts, string(e.Behave))
	}
	if e.InvalidFirst {
		parts = append(parts, "invalid_first")
	}
	if e.AwaitDecision {
		parts = append(parts, "await_decision")
	}
	if len(parts) == 0 {
		return ""
	}
	return " [script: " + strings.Join(parts, ", ") + "]"
}
