package fork

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// Run says how to launch a print-mode agent for a base or a fork.
type Run struct {
	// Spec is the harness, expanded: Argv is the binary and its flags, e.g.
	// claude -p --output-format json --model M --allowedTools Bash, without
	// a prompt; its Env and SetEnv decide the environment as for a pane.
	Spec session.Spec
	// Dir is the working directory.
	Dir string
	// Environ is the console's environment to scrub; nil means os.Environ().
	Environ []string
	// Model is the task's model, for a fingerprint whose argv names none.
	Model  string
	TaskID task.ID
	Phase  task.Phase
}

// params is r as a session's launch parameters. Print mode has no
// terminal, so the size is 0x0 for a base and its forks alike.
func (r Run) params() session.Params {
	return session.Params{Spec: r.Spec, Dir: r.Dir, Environ: r.Environ}
}

// env is the scrubbed environment the agent gets.
func (r Run) env() []string {
	environ := r.Environ
	if environ == nil {
		environ = os.Environ()
	}
	return session.ScrubEnv(environ, r.Spec)
}

// outcome is what one print-mode run reported.
type outcome struct {
	sessionID string
	text      string
	// records are the replies of this run, from its transcript (the model
	// that answered) or, when there is none, from the result's modelUsage
	// (the model asked for).
	totals  usage.Totals
	records []usage.Record
	ids     map[string]bool // message ids of the transcript's records
}

// printJSON is the part of the result object run reads beyond usage.
type printJSON struct {
	IsError bool   `json:"is_error"`
	Result  string `json:"result"`
	Subtype string `json:"subtype"`
}

// execPrint runs the launch's resolved binary with the spec's flags and
// extra, gives it prompt on stdin, and reads its result and usage. Records
// whose message id is in exclude belong to the base the run forked from and
// are not counted.
//
// The prompt goes on stdin rather than as the last argument: Claude Code's
// --allowedTools takes every following word, so a prompt after it is read
// as a tool name ("was read as a value of --allowedTools, not as a
// prompt"), and a brief can be longer than one argument may be.
func execPrint(ctx context.Context, r Run, l session.Launch, extra []string, prompt string,
	exclude map[string]bool, prices map[string]config.Price) (outcome, error) {
	args := append(append([]string(nil), r.Spec.Argv[1:]...), extra...)
	cmd := exec.CommandContext(ctx, l.Binary, args...)
	cmd.Dir, cmd.Env = r.Dir, r.env()
	cmd.Stdin = strings.NewReader(prompt)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return outcome{}, fmt.Errorf("run %s in %s: %w: %s", filepath.Base(l.Binary), r.Dir, err, tail(stderr.String()))
	}
	res, err := usage.ParsePrintResult(out, prices)
	if err != nil {
		return outcome{}, fmt.Errorf("run %s in %s: %w: %s", filepath.Base(l.Binary), r.Dir, err, tail(string(out)))
	}
	var pj printJSON
	_ = json.Unmarshal(out, &pj) // ParsePrintResult has read it already
	if pj.IsError {
		return outcome{}, fmt.Errorf("run %s in %s: the agent reported an error (%s): %s", filepath.Base(l.Binary), r.Dir, pj.Subtype, tail(pj.Result))
	}
	o := outcome{sessionID: res.SessionID, text: pj.Result, totals: res.Totals}
	for _, m := range res.Totals.ModelIDs() {
		o.records = append(o.records, usage.Record{Model: m, Tokens: res.Totals.Models[m].Tokens})
	}
	recs, err := transcript(cmd.Env, r.Dir, res.SessionID)
	if err != nil {
		return o, nil // the result's figures stand; the transcript only names the model better
	}
	o.records = nil
	o.totals, o.ids = usage.Totals{}, map[string]bool{}
	for _, rec := range recs {
		o.ids[rec.MessageID] = true
		if !exclude[rec.MessageID] {
			o.totals.Add(rec, prices)
			o.records = append(o.records, rec)
		}
	}
	return o, nil
}

// transcript reads the usage records of conversation id, each reply once,
// from the config directory env names. The CLI files a conversation under
// the directory it ran in; a symlinked path may be filed under its target,
// so any project folder holding the id is accepted.
func transcript(env []string, dir, id string) ([]usage.Record, error) {
	conf := usage.ClaudeConfigDir(env)
	if conf == "" || id == "" {
		return nil, errors.New("no config directory or conversation id")
	}
	path := filepath.Join(usage.ClaudeProjectDir(conf, dir), id+".jsonl")
	if _, err := os.Stat(path); err != nil {
		matches, _ := filepath.Glob(filepath.Join(conf, "projects", "*", id+".jsonl"))
		if len(matches) == 0 {
			return nil, fmt.Errorf("transcript of %s: %w", id, err)
		}
		path = matches[0]
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("transcript of %s: %w", id, err)
	}
	defer f.Close()
	var out []usage.Record
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		rec, ok := usage.ParseTranscriptLine(sc.Bytes())
		if !ok || (rec.MessageID != "" && seen[rec.MessageID]) {
			continue
		}
		seen[rec.MessageID] = true
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("transcript of %s: %w", id, err)
	}
	return out, nil
}

// tail returns the last line-ish part of s for an error message.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 400 {
		s = "…" + s[len(s)-400:]
	}
	if s == "" {
		return "(no output)"
	}
	return s
}
