package usage

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// transcriptLine is the part of a Claude Code transcript line usage reads.
// Observed with Claude Code 2.1.332: one line per content block of an
// assistant reply, each with type "assistant" and the reply's message id,
// model and usage repeated; other lines (user turns, attachments, request
// shapes, queue operations) carry no usage.
type transcriptLine struct {
	Type    string `json:"type"`
	Message *struct {
		ID    string `json:"id"`
		Model string `json:"model"`
		Usage *struct {
			InputTokens              int64 `json:"input_tokens"`
			OutputTokens             int64 `json:"output_tokens"`
			CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
			CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

// syntheticModel is the model the CLI writes on messages it made up itself
// (an interrupted turn, an API error shown as a reply); they cost nothing.
const syntheticModel = "<synthetic>"

// ParseTranscriptLine returns the usage record of one transcript line, and
// false for lines that carry none.
func ParseTranscriptLine(line []byte) (Record, bool) {
	var l transcriptLine
	if err := json.Unmarshal(line, &l); err != nil || l.Type != "assistant" || l.Message == nil || l.Message.Usage == nil {
		return Record{}, false
	}
	if l.Message.Model == "" || l.Message.Model == syntheticModel {
		return Record{}, false
	}
	u := l.Message.Usage
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheCreationInputTokens < 0 || u.CacheReadInputTokens < 0 {
		return Record{}, false // no reply uses fewer than no tokens: not a record to count
	}
	return Record{Model: l.Message.Model, MessageID: l.Message.ID, Tokens: Tokens{
		Input: u.InputTokens, Output: u.OutputTokens,
		CacheCreation: u.CacheCreationInputTokens, CacheRead: u.CacheReadInputTokens,
	}}, true
}

// ClaudeProjectDir returns the directory under a Claude Code config dir
// (CLAUDE_CONFIG_DIR, by default ~/.claude) that holds the transcripts of
// conversations run in workdir: the CLI names it after the working
// directory with every character but ASCII letters and digits replaced by
// "-" (observed: /tmp/w1.x → -tmp-w1-x).
func ClaudeProjectDir(configDir, workdir string) string {
	enc := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, workdir)
	return filepath.Join(configDir, "projects", enc)
}

// ClaudeConfigDir returns the config directory a Claude Code process with
// environment env uses: CLAUDE_CONFIG_DIR, else $HOME/.claude; "" when
// neither is set.
func ClaudeConfigDir(env []string) string {
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "CLAUDE_CONFIG_DIR="); ok && v != "" {
			return v
		}
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".claude")
}
