package usage

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"time"
)

// Gemini CLI chat records: one JSON-lines file per conversation under
// $GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*.jsonl (the home
// defaults to HOME). Observed with Gemini CLI 0.61.0, the first line names
// the project by a hash of its directory, and each model reply is written
// (at least twice, as its tool calls complete) with its id and usage:
//
//	{"sessionId":"…","projectHash":"<sha256 of the working directory>",…}
//	{"id":"c1c1…","type":"gemini","model":"gemini-2.5-pro","tokens":{
//	  "input":10781,"output":62,"cached":0,"thoughts":0,"tool":0,"total":10843},…}
//
// input counts the cached tokens too; they are taken out of Input. Thinking
// tokens are billed as output.

type geminiLine struct {
	ProjectHash string    `json:"projectHash"`
	StartTime   time.Time `json:"startTime"`
	ID          string    `json:"id"`
	Type        string    `json:"type"`
	Model       string    `json:"model"`
	Tokens      *struct {
		Input    int64 `json:"input"`
		Output   int64 `json:"output"`
		Cached   int64 `json:"cached"`
		Thoughts int64 `json:"thoughts"`
	} `json:"tokens"`
}

// GeminiChat returns a parser for one Gemini CLI chat file that counts only
// a conversation run in workdir ("" counts every conversation) and begun
// at or after since (zero: whenever). A conversation begun before since
// is an earlier session's: its CLI may still write its file after the
// next session began (a stopped CLI saves its chat as it exits, and on a
// loaded machine that came after the next session's meter started, which
// then counted the earlier session's replies again).
func GeminiChat(workdir string, since time.Time) LineParser {
	want := ""
	if workdir != "" {
		want = GeminiProjectHash(workdir)
	}
	// The chat's start has millisecond precision.
	since = since.Truncate(time.Millisecond)
	// A file is skipped until its first line names the project.
	skip := want != "" || !since.IsZero()
	return func(line []byte) (Record, bool) {
		var l geminiLine
		if json.Unmarshal(line, &l) != nil {
			return Record{}, false
		}
		if l.ProjectHash != "" {
			skip = want != "" && l.ProjectHash != want && l.ProjectHash != geminiHash(workdir) ||
				!since.IsZero() && (l.StartTime.IsZero() || l.StartTime.Before(since))
		}
		if skip || l.Type != "gemini" || l.Tokens == nil || l.Model == "" {
			return Record{}, false
		}
		t := l.Tokens
		return Record{Model: l.Model, MessageID: l.ID, Tokens: Tokens{
			Input: t.Input - t.Cached, Output: t.Output + t.Thoughts, CacheRead: t.Cached,
		}}, true
	}
}

// GeminiProjectHash is how the Gemini CLI names a working directory in its
// chat records: the SHA-256 of its path, with symlinks resolved.
func GeminiProjectHash(workdir string) string { return geminiHash(cleanDir(workdir)) }

func geminiHash(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return hex.EncodeToString(sum[:])
}

// GeminiDir returns the directory a Gemini CLI with environment env keeps
// its state in: $GEMINI_CLI_HOME/.gemini, else $HOME/.gemini; "" when
// neither is set.
func GeminiDir(env []string) string {
	var home, cliHome string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GEMINI_CLI_HOME="); ok && v != "" {
			cliHome = v
		}
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	if cliHome != "" {
		home = cliHome
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".gemini")
}
