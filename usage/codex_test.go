package usage

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// codexRollout is a Codex 0.171.0 rollout file for one conversation in dir,
// trimmed to the fields usage reads: two responses recorded, each followed
// by the running total.
func codexRollout(dir string) string {
	return fmt.Sprintf(`{"type":"session_meta","payload":{"id":"s1","cwd":%q,"cli_version":"0.171.0"}}
{"type":"event_msg","payload":{"type":"task_started"}}
{"type":"turn_context","payload":{"cwd":%q,"model":"gpt-stub","approval_policy":"never"}}
{"type":"token_usage_record","payload":{"response_id":"resp_1","usage":{"input_tokens":1200,"cached_input_tokens":200,"cache_write_input_tokens":0,"output_tokens":50,"reasoning_output_tokens":0,"total_tokens":1250}}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1200,"cached_input_tokens":200,"output_tokens":50,"total_tokens":1250},"last_token_usage":{"input_tokens":1200,"cached_input_tokens":200,"output_tokens":50}}}}
{"type":"token_usage_record","payload":{"response_id":"resp_2","usage":{"input_tokens":1300,"cached_input_tokens":300,"cache_write_input_tokens":100,"output_tokens":60,"reasoning_output_tokens":0,"total_tokens":1360}}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":2500,"cached_input_tokens":500,"cache_write_input_tokens":100,"output_tokens":110,"total_tokens":2610}}}}
`, dir, dir)
}

func parseAll(p LineParser, text string) []Record {
	var out []Record
	for _, line := range splitLines(text) {
		if r, ok := p([]byte(line)); ok {
			out = append(out, r)
		}
	}
	return out
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func TestCodexRolloutCountsEachResponseOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	got := parseAll(CodexRollout(dir), codexRollout(dir))
	require.Equal(t, []Record{
		{Model: "gpt-stub", MessageID: "resp_1", Tokens: Tokens{Input: 1000, Output: 50, CacheRead: 200}},
		{Model: "gpt-stub", MessageID: "resp_2", Tokens: Tokens{Input: 900, Output: 60, CacheCreation: 100, CacheRead: 300}},
	}, got)
}

func TestCodexRolloutOfAnotherDirectoryIsNotCounted(t *testing.T) {
	t.Parallel()
	require.Empty(t, parseAll(CodexRollout(t.TempDir()), codexRollout(t.TempDir())))
	// No directory to match: every conversation counts.
	require.Len(t, parseAll(CodexRollout(""), codexRollout(t.TempDir())), 2)
}

// An older rollout has no per-response records: the running totals'
// growth is counted, and a repeated total adds nothing.
func TestCodexRolloutFromRunningTotals(t *testing.T) {
	t.Parallel()
	text := `{"type":"session_meta","payload":{"cwd":"/w"}}
{"type":"turn_context","payload":{"model":"gpt-old"}}
{"type":"event_msg","payload":{"type":"token_count","info":null}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":10}}}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":10}}}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":250,"cached_input_tokens":90,"output_tokens":30}}}}
not json
`
	require.Equal(t, []Record{
		{Model: "gpt-old", Tokens: Tokens{Input: 60, Output: 10, CacheRead: 40}},
		{Model: "gpt-old", Tokens: Tokens{Input: 100, Output: 20, CacheRead: 50}},
	}, parseAll(CodexRollout("/w"), text))
}

// FollowWith reads a rollout written after it starts, under the dated
// folders Codex makes as it goes, and counts each response once.
func TestFollowCodexRollout(t *testing.T) {
	t.Parallel()
	home, work := t.TempDir(), t.TempDir()
	root := filepath.Join(home, "sessions")
	var tot Totals // emit is never called concurrently
	f, err := FollowWith(root, time.Time{}, nil, func(string) LineParser { return CodexRollout(work) }, func(r Record) {
		tot.Add(r, nil)
	})
	require.NoError(t, err)
	day := filepath.Join(root, "2026", "11", "30")
	require.NoError(t, os.MkdirAll(day, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(day, "rollout-1.jsonl"), []byte(codexRollout(work)), 0o600))
	require.NoError(t, f.Close())
	require.Equal(t, Tokens{Input: 1900, Output: 110, CacheCreation: 100, CacheRead: 500}, tot.Models["gpt-stub"].Tokens)
}

func TestCodexHome(t *testing.T) {
	t.Parallel()
	require.Equal(t, "/c", CodexHome([]string{"HOME=/h", "CODEX_HOME=/c"}))
	require.Equal(t, filepath.Join("/h", ".codex"), CodexHome([]string{"HOME=/h"}))
	require.Equal(t, "", CodexHome(nil))
}

// A rollout the CLI created just before the follower started is read from
// its start when it is newer than since, so its session_meta is seen; an
// older one is followed from its end and, its directory unknown, ignored.
func TestFollowCodexRolloutCreatedBeforeTheFollower(t *testing.T) {
	t.Parallel()
	home, work := t.TempDir(), t.TempDir()
	root := filepath.Join(home, "sessions")
	day := filepath.Join(root, "2026", "11", "30")
	require.NoError(t, os.MkdirAll(day, 0o700))
	old, fresh := filepath.Join(day, "rollout-old.jsonl"), filepath.Join(day, "rollout-new.jsonl")
	require.NoError(t, os.WriteFile(old, []byte(codexRollout(work)), 0o600))
	require.NoError(t, os.Chtimes(old, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour)))
	require.NoError(t, os.WriteFile(fresh, []byte(codexRollout(work)), 0o600))

	var tot Totals
	f, err := FollowWith(root, time.Now().Add(-time.Minute), nil, func(string) LineParser { return CodexRollout(work) }, func(r Record) {
		tot.Add(r, nil)
	})
	require.NoError(t, err)
	fh, err := os.OpenFile(old, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = fh.WriteString(`{"type":"token_usage_record","payload":{"response_id":"resp_9","usage":{"input_tokens":5,"output_tokens":5}}}` + "\n")
	require.NoError(t, err)
	require.NoError(t, fh.Close())
	require.NoError(t, f.Close())
	require.Equal(t, Tokens{Input: 1900, Output: 110, CacheCreation: 100, CacheRead: 500}, tot.Models["gpt-stub"].Tokens)
}
