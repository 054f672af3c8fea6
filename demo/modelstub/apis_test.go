package modelstub

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// dataEvents returns the JSON of each data line of an SSE stream, in order,
// stopping at [DONE].
func dataEvents(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			break
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		out = append(out, m)
	}
	require.NoError(t, sc.Err())
	return out
}

// writeRule answers every main-loop request with text and one Write call.
func writeRule(path string) []Rule {
	return []Rule{{Name: "write", When: Request.IsMainLoop, Reply: func(Request) Reply {
		return Reply{Text: "Writing it.", ToolUses: []ToolUse{Write(path, "it's \"done\"\n")}, Usage: Usage{InputTokens: 7, OutputTokens: 5, CacheReadInputTokens: 3}}
	}}}
}

// runShell runs a shell tool's command the way a CLI would and returns what
// the file it wrote holds.
func runShell(t *testing.T, command, path string) string {
	t.Helper()
	out, err := exec.Command("/bin/sh", "-c", command).CombinedOutput()
	require.NoError(t, err, "%s", out)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// TestResponsesAPI: a Codex-shaped request is flattened into turns, and the
// Write the script asks for comes back as an exec_command call whose shell
// command writes the file exactly; the usage counts the cached tokens as
// input, as the API does.
func TestResponsesAPI(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub dir", "out.txt")
	srv, base := startServer(t, writeRule(path))
	resp := post(t, base+"/v1/responses", map[string]any{
		"model": "gpt-x", "stream": true, "instructions": "sys",
		"tools": []map[string]any{{"type": "function", "name": "exec_command"}, {"type": "web_search"}},
		"input": []map[string]any{
			{"type": "message", "role": "developer", "content": []map[string]any{{"type": "input_text", "text": "rules"}}},
			{"type": "message", "role": "user", "content": []map[string]any{{"type": "input_text", "text": "<environment_context><cwd>/w</cwd></environment_context>"}}},
			{"type": "message", "role": "user", "content": []map[string]any{{"type": "input_text", "text": "hello"}}},
			{"type": "reasoning", "summary": []any{}},
			{"type": "function_call", "name": "exec_command", "arguments": `{"cmd":"ls"}`, "call_id": "c1"},
			{"type": "function_call_output", "call_id": "c1", "output": "a\nb"},
		},
	})
	require.Equal(t, 200, resp.StatusCode)
	events := dataEvents(t, resp.Body)
	last := events[len(events)-1]
	require.Equal(t, "response.completed", last["type"])
	r := last["response"].(map[string]any)
	require.Equal(t, map[string]any{"input_tokens": 10.0, "input_tokens_details": map[string]any{"cached_tokens": 3.0},
		"output_tokens": 5.0, "output_tokens_details": map[string]any{"reasoning_tokens": 0.0}, "total_tokens": 15.0}, r["usage"])
	var call map[string]any
	for _, e := range events {
		if e["type"] == "response.output_item.done" && e["item"].(map[string]any)["type"] == "function_call" {
			call = e["item"].(map[string]any)
		}
	}
	require.Equal(t, "exec_command", call["name"])
	var args struct{ Cmd string }
	require.NoError(t, json.Unmarshal([]byte(call["arguments"].(string)), &args))
	require.Equal(t, "it's \"done\"\n", runShell(t, args.Cmd, path))

	req := srv.Requests()[0]
	require.Equal(t, APIResponses, req.API)
	require.Equal(t, "/w", req.WorkingDir())
	require.Len(t, req.Messages, 3, "user turn, assistant turn, tool results")
	require.Equal(t, []string{"user", "assistant", "user"}, []string{req.Messages[0].Role, req.Messages[1].Role, req.Messages[2].Role})
	require.Equal(t, "a\nb", req.Messages[2].ToolResults[0].Content)
}

// TestChatCompletionsAPI: an opencode-shaped request; the Write becomes a
// bash call, streamed as chunks, the usage in a last chunk, then [DONE].
func TestChatCompletionsAPI(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.txt")
	srv, base := startServer(t, writeRule(path))
	resp := post(t, base+"/v1/chat/completions", map[string]any{
		"model": "m", "stream": true,
		"tools": []map[string]any{{"type": "function", "function": map[string]any{"name": "bash"}}},
		"messages": []map[string]any{
			{"role": "system", "content": "sys"},
			{"role": "user", "content": []map[string]any{{"type": "text", "text": "hello"}}},
			{"role": "assistant", "content": nil, "tool_calls": []map[string]any{{"id": "c1", "type": "function", "function": map[string]any{"name": "bash", "arguments": `{"command":"ls"}`}}}},
			{"role": "tool", "tool_call_id": "c1", "content": "a"},
		},
	})
	events := dataEvents(t, resp.Body)
	var text, cmd string
	var finish any
	for _, e := range events[:len(events)-1] {
		c := e["choices"].([]any)[0].(map[string]any)
		d := c["delta"].(map[string]any)
		if s, ok := d["content"].(string); ok {
			text += s
		}
		if tcs, ok := d["tool_calls"].([]any); ok {
			f := tcs[0].(map[string]any)["function"].(map[string]any)
			require.Equal(t, "bash", f["name"])
			var args struct{ Command string }
			require.NoError(t, json.Unmarshal([]byte(f["arguments"].(string)), &args))
			cmd = args.Command
		}
		if c["finish_reason"] != nil {
			finish = c["finish_reason"]
		}
	}
	require.Equal(t, "Writing it.", text)
	require.Equal(t, "tool_calls", finish)
	require.Equal(t, map[string]any{"prompt_tokens": 10.0, "completion_tokens": 5.0, "total_tokens": 15.0,
		"prompt_tokens_details": map[string]any{"cached_tokens": 3.0}}, events[len(events)-1]["usage"])
	require.Equal(t, "it's \"done\"\n", runShell(t, cmd, path))
	req := srv.Requests()[0]
	require.Equal(t, "sys", req.System)
	require.Len(t, req.Messages, 3)
}

// TestGeminiAPI: a Gemini-CLI-shaped request; the Write becomes a
// run_shell_command call in the last streamed event, with the usage.
func TestGeminiAPI(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.txt")
	srv, base := startServer(t, writeRule(path))
	resp := post(t, base+"/v1beta/models/gemini-x:streamGenerateContent?alt=sse", map[string]any{
		"systemInstruction": map[string]any{"parts": []map[string]any{{"text": "sys"}}},
		"tools":             []map[string]any{{"functionDeclarations": []map[string]any{{"name": "run_shell_command"}}}},
		"contents": []map[string]any{
			{"role": "user", "parts": []map[string]any{{"text": "hello"}}},
			{"role": "model", "parts": []map[string]any{{"functionCall": map[string]any{"name": "run_shell_command", "args": map[string]any{"command": "ls"}}}}},
			{"role": "user", "parts": []map[string]any{{"functionResponse": map[string]any{"name": "run_shell_command", "response": map[string]any{"output": "a"}}}}},
		},
	})
	events := dataEvents(t, resp.Body)
	var text, cmd string
	for _, e := range events {
		c := e["candidates"].([]any)[0].(map[string]any)
		for _, p := range c["content"].(map[string]any)["parts"].([]any) {
			p := p.(map[string]any)
			if s, ok := p["text"].(string); ok {
				text += s
			}
			if fc, ok := p["functionCall"].(map[string]any); ok {
				require.Equal(t, "run_shell_command", fc["name"])
				cmd = fc["args"].(map[string]any)["command"].(string)
			}
		}
	}
	require.Equal(t, "Writing it.", text)
	require.Equal(t, map[string]any{"promptTokenCount": 10.0, "candidatesTokenCount": 5.0, "cachedContentTokenCount": 3.0, "totalTokenCount": 15.0},
		events[len(events)-1]["usageMetadata"])
	require.Equal(t, "it's \"done\"\n", runShell(t, cmd, path))
	req := srv.Requests()[0]
	require.Equal(t, "gemini-x", req.Model)
	require.Equal(t, []string{"user", "assistant", "user"}, []string{req.Messages[0].Role, req.Messages[1].Role, req.Messages[2].Role})
}

// TestShellEdit: the Edit a script asks for, played as a shell command,
// replaces exactly the one occurrence, keeps the rest byte for byte, and
// fails when the text is not there.
func TestShellEdit(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "calc.go")
	orig := "package calc\n\nfunc Add(a, b int) int { return a - b }\n// $HOME `x` \\n end\n"
	require.NoError(t, os.WriteFile(path, []byte(orig), 0o644))
	cmd, ok := ShellCommand(Edit(path, "a - b", "a + b"))
	require.True(t, ok)
	require.Equal(t, strings.Replace(orig, "a - b", "a + b", 1), runShell(t, cmd, path))
	cmd, _ = ShellCommand(Edit(path, "missing", "x"))
	require.Error(t, exec.Command("/bin/sh", "-c", cmd).Run())
}
