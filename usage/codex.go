package usage

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// Codex CLI session rollouts: one JSON-lines file per conversation under
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl (CODEX_HOME defaults to
// ~/.codex). Observed with Codex 0.171.0, the lines that matter are:
//
//	{"type":"session_meta","payload":{"cwd":"/work/dir",...}}
//	{"type":"turn_context","payload":{"cwd":...,"model":"gpt-5.5",...}}
//	{"type":"token_usage_record","payload":{"response_id":"resp_1",
//	  "usage":{"input_tokens":1200,"cached_input_tokens":200,
//	  "cache_write_input_tokens":0,"output_tokens":50,...}}}
//	{"type":"event_msg","payload":{"type":"token_count","info":{
//	  "total_token_usage":{...},"last_token_usage":{...}}}}
//
// token_usage_record is written once per model response, with its id;
// token_count events repeat running totals. A file with records is counted
// from its records; one without (older releases) from the growth of the
// running total between token_count events. OpenAI's input_tokens include
// the cached and cache-written tokens, so those are taken out of Input to
// fit the four columns every source shares.

type codexLine struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

type codexUsage struct {
	InputTokens      int64 `json:"input_tokens"`
	CachedInput      int64 `json:"cached_input_tokens"`
	CacheWriteInput  int64 `json:"cache_write_input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	ReasoningOutput  int64 `json:"reasoning_output_tokens"`
	TotalTokensCount int64 `json:"total_tokens"`
}

func (u codexUsage) tokens() Tokens {
	return Tokens{
		Input:         u.InputTokens - u.CachedInput - u.CacheWriteInput,
		Output:        u.OutputTokens,
		CacheCreation: u.CacheWriteInput,
		CacheRead:     u.CachedInput,
	}
}

type codexPayload struct {
	Type       string      `json:"type"`
	Cwd        string      `json:"cwd"`
	Model      string      `json:"model"`
	ResponseID string      `json:"response_id"`
	Usage      *codexUsage `json:"usage"`
	Info       *struct {
		Total *codexUsage `json:"total_token_usage"`
	} `json:"info"`
}

// CodexRollout returns a parser for one Codex rollout file that counts only
// a conversation run in workdir ("" counts every conversation): the file's
// session_meta names the directory, before any usage.
func CodexRollout(workdir string) LineParser {
	want := cleanDir(workdir)
	var (
		model string
		// A file is skipped until its session_meta names the directory.
		skip      = want != ""
		sawRecord bool
		total     Tokens
	)
	return func(line []byte) (Record, bool) {
		var l codexLine
		if json.Unmarshal(line, &l) != nil {
			return Record{}, false
		}
		var p codexPayload
		if json.Unmarshal(l.Payload, &p) != nil {
			return Record{}, false
		}
		switch l.Type {
		case "session_meta":
			skip = want != "" && cleanDir(p.Cwd) != want
		case "turn_context":
			if p.Model != "" {
				model = p.Model
			}
		case "token_usage_record":
			if skip || p.Usage == nil {
				return Record{}, false
			}
			sawRecord = true
			return Record{Model: codexModel(model), MessageID: p.ResponseID, Tokens: p.Usage.tokens()}, true
		case "event_msg":
			if skip || sawRecord || p.Type != "token_count" || p.Info == nil || p.Info.Total == nil {
				return Record{}, false
			}
			now := p.Info.Total.tokens()
			d := Tokens{Input: now.Input - total.Input, Output: now.Output - total.Output,
				CacheCreation: now.CacheCreation - total.CacheCreation, CacheRead: now.CacheRead - total.CacheRead}
			total = now
			if d.IsZero() {
				return Record{}, false
			}
			return Record{Model: codexModel(model), Tokens: d}, true
		}
		return Record{}, false
	}
}

// codexModel names usage whose model the rollout never said.
func codexModel(m string) string {
	if m == "" {
		return "codex (model not recorded)"
	}
	return m
}

// cleanDir is dir with symlinks resolved where it exists, so a worktree
// reached through a symlinked temporary directory still matches.
func cleanDir(dir string) string {
	if dir == "" {
		return ""
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return filepath.Clean(dir)
}

// CodexHome returns the directory a Codex CLI with environment env keeps
// its state in: CODEX_HOME, else $HOME/.codex; "" when neither is set.
func CodexHome(env []string) string {
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "CODEX_HOME="); ok && v != "" {
			return v
		}
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".codex")
}
