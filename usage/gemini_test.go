package usage

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// geminiChat is a Gemini CLI 0.61.0 chat file for one conversation in dir,
// trimmed: one reply written twice (before and after its tool call ran),
// then a second reply.
func geminiChat(dir string) string {
	return fmt.Sprintf(`{"sessionId":"s","projectHash":%q,"startTime":"2026-11-30T19:40:23.892Z","kind":"main"}
{"id":"u1","type":"user","content":[{"text":"## Goal"}]}
{"$set":{"lastUpdated":"2026-11-30T19:40:23.923Z"}}
{"id":"g1","type":"gemini","content":"Writing.","tokens":{"input":10781,"output":62,"cached":81,"thoughts":5,"tool":0,"total":10848},"model":"gemini-stub"}
{"id":"g1","type":"gemini","content":"Writing.","tokens":{"input":10781,"output":62,"cached":81,"thoughts":5,"tool":0,"total":10848},"model":"gemini-stub","toolCalls":[]}
{"id":"g2","type":"gemini","content":"Done.","tokens":{"input":11024,"output":23,"cached":0,"thoughts":0,"tool":0,"total":11047},"model":"gemini-stub"}
`, GeminiProjectHash(dir))
}

func TestGeminiChat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	got := parseAll(GeminiChat(dir, time.Time{}), geminiChat(dir))
	// The follower drops the repeated id; the parser reports each line.
	require.Equal(t, []Record{
		{Model: "gemini-stub", MessageID: "g1", Tokens: Tokens{Input: 10700, Output: 67, CacheRead: 81}},
		{Model: "gemini-stub", MessageID: "g1", Tokens: Tokens{Input: 10700, Output: 67, CacheRead: 81}},
		{Model: "gemini-stub", MessageID: "g2", Tokens: Tokens{Input: 11024, Output: 23}},
	}, got)
	require.Empty(t, parseAll(GeminiChat(t.TempDir(), time.Time{}), geminiChat(dir)), "another directory's chat")

	// The chat began at 19:40:23.892: a session begun then or before
	// counts it; one begun later does not (an earlier session's CLI saved
	// it as it exited).
	start := time.Date(2026, 11, 30, 19, 40, 23, 892_400_000, time.UTC)
	require.Len(t, parseAll(GeminiChat(dir, start), geminiChat(dir)), 3, "begun in the same millisecond")
	require.Len(t, parseAll(GeminiChat(dir, start.Add(-time.Hour)), geminiChat(dir)), 3)
	require.Empty(t, parseAll(GeminiChat(dir, start.Add(time.Millisecond)), geminiChat(dir)), "an earlier session's chat")
}

func TestGeminiDir(t *testing.T) {
	t.Parallel()
	require.Equal(t, filepath.Join("/g", ".gemini"), GeminiDir([]string{"HOME=/h", "GEMINI_CLI_HOME=/g"}))
	require.Equal(t, filepath.Join("/h", ".gemini"), GeminiDir([]string{"HOME=/h"}))
	require.Equal(t, "", GeminiDir(nil))
	// The CLI names a project by the SHA-256 of its path (sha256sum agrees).
	require.Equal(t, "06dc20b1b2150f1839b3d08524d9922445e5b32804d93ff5ec39944db3266a7a", geminiHash("/home/user/calc"))
}
