package usage

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
)

// assistantLine is a transcript line as Claude Code 2.1.332 writes it for
// one content block of a reply (trimmed to the fields that matter).
func assistantLine(id, model string, in, out, cw, cr int) string {
	return fmt.Sprintf(`{"type":"assistant","message":{"id":%q,"model":%q,"role":"assistant","content":[{"type":"text","text":"hi"}],`+
		`"usage":{"input_tokens":%d,"output_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"service_tier":"standard"}},"sessionId":"s"}`+"\n",
		id, model, in, out, cw, cr)
}

func TestParseTranscriptLine(t *testing.T) {
	t.Parallel()
	r, ok := ParseTranscriptLine([]byte(assistantLine("msg_1", "claude-x", 10, 2, 3, 4)))
	require.True(t, ok)
	require.Equal(t, Record{Model: "claude-x", MessageID: "msg_1", Tokens: Tokens{Input: 10, Output: 2, CacheCreation: 3, CacheRead: 4}}, r)
	for _, line := range []string{
		`{"type":"user","message":{"role":"user","content":"hello"}}`,
		`{"type":"assistant","message":{"id":"m","model":"<synthetic>","usage":{"input_tokens":0}}}`,
		`{"type":"queue-operation"}`,
		`not json`,
	} {
		_, ok := ParseTranscriptLine([]byte(line))
		require.False(t, ok, line)
	}
}

func TestTotalsAndCost(t *testing.T) {
	t.Parallel()
	prices := map[string]config.Price{"claude-x": {Input: 3, Output: 15, CacheCreation: 3.75, CacheRead: 0.3}}
	var tot Totals
	tot.Add(Record{Model: "claude-x", Tokens: Tokens{Input: 1_000_000, Output: 100_000}}, prices)
	tot.Add(Record{Model: "claude-x", Tokens: Tokens{CacheCreation: 1_000_000, CacheRead: 1_000_000}}, prices)
	tot.Add(Record{Model: "other", Tokens: Tokens{Input: 5}}, prices)
	tk, cost := tot.Sum()
	require.Equal(t, Tokens{Input: 1_000_005, Output: 100_000, CacheCreation: 1_000_000, CacheRead: 1_000_000}, tk)
	require.InDelta(t, 3+1.5+3.75+0.3, cost, 1e-9)
	require.Equal(t, []string{"claude-x", "other"}, tot.ModelIDs())
	require.False(t, tot.Models["other"].Priced)
	require.Equal(t, "claude-x: 1000000 in, 100000 out, 1000000 cache write, 1000000 cache read, $8.5500; "+
		"other: 5 in, 0 out, 0 cache write, 0 cache read, no price configured", tot.String())

	var sum Totals
	sum.Merge(tot)
	sum.Merge(tot)
	tk2, cost2 := sum.Sum()
	require.Equal(t, tk.Add(tk), tk2)
	require.InDelta(t, 2*cost, cost2, 1e-9)
	require.True(t, sum.Models["claude-x"].Priced)
}

func TestClaudeProjectDir(t *testing.T) {
	t.Parallel()
	require.Equal(t, filepath.Join("/c", "projects", "-tmp-w1-x--orchestra-worktrees-01AB"),
		ClaudeProjectDir("/c", "/tmp/w1.x/.orchestra/worktrees/01AB"))
	require.Equal(t, "/cfg", ClaudeConfigDir([]string{"HOME=/h", "CLAUDE_CONFIG_DIR=/cfg"}))
	require.Equal(t, filepath.Join("/h", ".claude"), ClaudeConfigDir([]string{"HOME=/h"}))
	require.Empty(t, ClaudeConfigDir(nil))
}

func TestParsePrintResult(t *testing.T) {
	t.Parallel()
	// Trimmed from a real `claude -p --output-format json` against the stub.
	out := `{"type":"result","subtype":"success","session_id":"7504db0d","total_cost_usd":0.152824,` +
		`"usage":{"input_tokens":37741,"output_tokens":93},` +
		`"modelUsage":{"claude-opus-5-5":{"inputTokens":37741,"outputTokens":93,"cacheReadInputTokens":7,"cacheCreationInputTokens":8,"costUSD":0.152824}}}`
	res, err := ParsePrintResult([]byte(out), map[string]config.Price{"claude-opus-5-5": {Input: 1}})
	require.NoError(t, err)
	require.Equal(t, "7504db0d", res.SessionID)
	require.InDelta(t, 0.152824, res.ReportedCostUSD, 1e-9)
	require.Equal(t, Tokens{Input: 37741, Output: 93, CacheCreation: 8, CacheRead: 7}, res.Totals.Models["claude-opus-5-5"].Tokens)
	require.InDelta(t, 0.037741, res.Totals.Models["claude-opus-5-5"].CostUSD, 1e-9)

	_, err = ParsePrintResult([]byte(`{"type":"assistant"}`), nil)
	require.Error(t, err)
}

// collect gathers emitted records and signals each one.
type collect struct {
	ch chan Record
}

func (c collect) emit(r Record) { c.ch <- r }

func (c collect) next(t *testing.T) Record {
	t.Helper()
	select {
	case r := <-c.ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no usage record within 10s")
		return Record{}
	}
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = fh.WriteString(text)
	require.NoError(t, err)
	require.NoError(t, fh.Close())
}

func TestFollowerReadsWhatIsAppended(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "projects")
	mine := filepath.Join(root, "-work-a")
	require.NoError(t, os.MkdirAll(mine, 0o755))
	old := filepath.Join(mine, "old.jsonl")
	appendFile(t, old, assistantLine("msg_old", "m", 100, 1, 0, 0))

	c := collect{ch: make(chan Record, 16)}
	f, err := Follow(root, func(p string) bool { return filepath.Dir(p) != filepath.Join(root, "-work-b") }, c.emit)
	require.NoError(t, err)

	// What an existing file held before is not counted; what it gains is.
	appendFile(t, old, assistantLine("msg_2", "m", 5, 1, 0, 0))
	require.Equal(t, "msg_2", c.next(t).MessageID)

	// A reply's usage repeated on each block's line counts once; a line
	// written in two pieces is read when it is complete.
	conv := filepath.Join(mine, "conv.jsonl")
	line := assistantLine("msg_3", "m", 7, 2, 3, 4)
	appendFile(t, conv, line+line[:20])
	require.Equal(t, Record{Model: "m", MessageID: "msg_3", Tokens: Tokens{Input: 7, Output: 2, CacheCreation: 3, CacheRead: 4}}, c.next(t))
	appendFile(t, conv, line[20:]+assistantLine("msg_4", "m", 1, 1, 1, 1))
	require.Equal(t, "msg_4", c.next(t).MessageID)

	// A directory that appears later is followed; one match refuses is not.
	other := filepath.Join(root, "-work-b")
	require.NoError(t, os.MkdirAll(other, 0o755))
	appendFile(t, filepath.Join(other, "x.jsonl"), assistantLine("msg_b", "m", 1, 1, 1, 1))
	sub := filepath.Join(root, "-work-c")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	appendFile(t, filepath.Join(sub, "y.jsonl"), assistantLine("msg_c", "m", 1, 1, 1, 1))
	require.Equal(t, "msg_c", c.next(t).MessageID)

	// Close reads what was written just before it.
	appendFile(t, conv, assistantLine("msg_5", "m", 1, 1, 1, 1))
	require.NoError(t, f.Close())
	var rest []string
	for len(c.ch) > 0 {
		rest = append(rest, (<-c.ch).MessageID)
	}
	require.Equal(t, []string{"msg_5"}, rest)
}
