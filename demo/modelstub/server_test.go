package modelstub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// startServer starts a stub with rules for a test and closes it after.
func startServer(t *testing.T, rules []Rule) (*Server, string) {
	t.Helper()
	srv := New(rules)
	srv.Logf = t.Logf
	base, err := srv.Start()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(base, "http://127.0.0.1:"), base)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	return srv, base
}

func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

type sseEvent struct {
	name string
	data map[string]any
}

// readSSE parses a server-sent event stream, checking that each event's
// name matches its data's type.
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var events []sseEvent
	var name string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var data map[string]any
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &data))
			require.Equal(t, name, data["type"])
			events = append(events, sseEvent{name: name, data: data})
		case line == "":
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	require.NoError(t, sc.Err())
	return events
}

func TestStreamingReplyIsWellFormedSSE(t *testing.T) {
	t.Parallel()
	input := map[string]any{"file_path": "/w/.orchestra/plan.json", "content": "{\"a\": \"ünïcode\"}\n", "n": 3.5}
	srv, base := startServer(t, []Rule{{
		Name: "tool",
		When: func(req Request) bool { return req.HasTool("Write") },
		Reply: func(Request) Reply {
			return Reply{Text: "Writing it.", ToolUses: []ToolUse{{Name: "Write", Input: input}, Bash("go test ./...", "Run tests")},
				Usage: Usage{InputTokens: 7, OutputTokens: 5, CacheReadInputTokens: 3}}
		},
	}})
	resp := post(t, base+"/v1/messages?beta=true", map[string]any{
		"model": "claude-test", "max_tokens": 100, "stream": true,
		"system":   []map[string]any{{"type": "text", "text": "sys"}},
		"tools":    []map[string]any{{"name": "Write"}, {"name": "Bash"}},
		"messages": []map[string]any{{"role": "user", "content": "hello"}},
	})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	events := readSSE(t, resp.Body)

	var names []string
	text := ""
	inputs := map[int]string{}
	toolNames := map[int]string{}
	for _, e := range events {
		names = append(names, e.name)
		switch e.name {
		case "content_block_start":
			cb := e.data["content_block"].(map[string]any)
			if cb["type"] == "tool_use" {
				toolNames[int(e.data["index"].(float64))] = cb["name"].(string)
				require.NotEmpty(t, cb["id"])
			}
		case "content_block_delta":
			d := e.data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				text += d["text"].(string)
			case "input_json_delta":
				inputs[int(e.data["index"].(float64))] += d["partial_json"].(string)
			}
		}
	}
	require.Equal(t, "message_start", names[0])
	require.Equal(t, []string{"message_delta", "message_stop"}, names[len(names)-2:])
	require.Equal(t, "Writing it.", text)
	require.Equal(t, map[int]string{1: "Write", 2: "Bash"}, toolNames)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(inputs[1]), &got))
	require.Equal(t, input, got)
	require.NoError(t, json.Unmarshal([]byte(inputs[2]), &got))
	require.Equal(t, "go test ./...", got["command"])

	start := events[0].data["message"].(map[string]any)
	require.Equal(t, "claude-test", start["model"])
	delta := events[len(events)-2].data
	require.Equal(t, "tool_use", delta["delta"].(map[string]any)["stop_reason"])
	require.Equal(t, map[string]any{"input_tokens": 7.0, "output_tokens": 5.0, "cache_creation_input_tokens": 0.0, "cache_read_input_tokens": 3.0}, delta["usage"])

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "/v1/messages", reqs[0].Path)
	require.Equal(t, "sys", reqs[0].System)
	require.True(t, reqs[0].Stream)
	require.Equal(t, "hello", reqs[0].Messages[0].Text)
}

func TestNonStreamingReplyAndSideRequests(t *testing.T) {
	t.Parallel()
	srv, base := startServer(t, PhaseScript(ScriptOptions{}))
	// A side request: no tools, so the fallback answers and the script is
	// not disturbed.
	resp := post(t, base+"/v1/messages", map[string]any{
		"model": "claude-haiku", "max_tokens": 1,
		"messages": []map[string]any{{"role": "user", "content": renderBrief(task.PhasePlan)}},
	})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var msg struct {
		Type       string           `json:"type"`
		Model      string           `json:"model"`
		Content    []map[string]any `json:"content"`
		StopReason string           `json:"stop_reason"`
		Usage      Usage            `json:"usage"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&msg))
	require.Equal(t, "message", msg.Type)
	require.Equal(t, "claude-haiku", msg.Model)
	require.Equal(t, "end_turn", msg.StopReason)
	require.Equal(t, []map[string]any{{"type": "text", "text": "OK."}}, msg.Content)
	require.Positive(t, msg.Usage.InputTokens)

	resp = post(t, base+"/v1/messages/count_tokens", map[string]any{
		"model": "claude-haiku", "messages": []map[string]any{{"role": "user", "content": "count me"}},
	})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var count struct {
		InputTokens int `json:"input_tokens"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&count))
	require.Positive(t, count.InputTokens)

	resp = post(t, base+"/api/something/new", map[string]any{})
	require.Equal(t, http.StatusOK, resp.StatusCode)

	ex := srv.Exchanges()
	require.Len(t, ex, 3)
	require.Equal(t, "fallback", ex[0].Rule)
	require.Equal(t, "/v1/messages/count_tokens", ex[1].Request.Path)
	require.Equal(t, "/api/something/new", ex[2].Request.Path)
}

// A held reply sends nothing until the client goes away or the server
// closes; Close releases it at once instead of waiting out Shutdown's grace.
func TestHeldReplyIsReleasedByCancelAndByClose(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{}, 2)
	srv := New([]Rule{{Name: "stall", When: func(Request) bool { return true },
		Reply: func(Request) Reply { asked <- struct{}{}; return Reply{Hold: true} }}})
	srv.Logf = t.Logf
	base, err := srv.Start()
	require.NoError(t, err)
	body := `{"model":"m","max_tokens":1,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	send := func(ctx context.Context) <-chan error {
		done := make(chan error, 1)
		go func() {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/messages", strings.NewReader(body))
			if err == nil {
				var resp *http.Response
				if resp, err = http.DefaultClient.Do(req); err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
			}
			done <- err
		}()
		return done
	}

	// The client gives up: its request ends with the cancellation.
	ctx, cancel := context.WithCancel(t.Context())
	first := send(ctx)
	<-asked
	cancel()
	require.ErrorIs(t, <-first, context.Canceled)

	// The server closes while a reply is held: Close returns well before
	// its two-second grace, and the client's request ends.
	second := send(t.Context())
	<-asked
	start := time.Now()
	require.NoError(t, srv.Close())
	require.Less(t, time.Since(start), time.Second, "a held reply does not hold Close up")
	<-second
	require.Len(t, srv.Exchanges(), 2, "held requests are recorded")
	require.True(t, srv.Exchanges()[1].Reply.Hold)
}
