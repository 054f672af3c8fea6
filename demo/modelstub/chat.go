package modelstub

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// The OpenAI Chat Completions API (POST /v1/chat/completions), as much of
// it as opencode's OpenAI-compatible provider uses: messages with roles
// system, user, assistant (with tool_calls) and tool (with tool_call_id),
// streamed back as chat.completion.chunk events, the usage in a last chunk
// with no choices, then [DONE].

type chatRequest struct {
	Model     string        `json:"model"`
	Messages  []chatMessage `json:"messages"`
	Tools     []chatTool    `json:"tools"`
	Stream    bool          `json:"stream"`
	MaxTokens int           `json:"max_tokens"`
}

type chatTool struct {
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

type chatMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
}

func parseChatBody(req *Request) error {
	var w chatRequest
	if err := json.Unmarshal(req.Raw, &w); err != nil {
		return fmt.Errorf("chat completions body: %w", err)
	}
	req.Model, req.Stream, req.MaxTokens = w.Model, w.Stream, w.MaxTokens
	for _, t := range w.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	for i, m := range w.Messages {
		text, err := responsesText(m.Content)
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		switch m.Role {
		case "system", "developer":
			if req.System != "" {
				req.System += "\n"
			}
			req.System += text
			continue
		case "tool":
			req.Messages = appendTurn(req.Messages, Message{Role: "user", ToolResults: []ToolResult{{ToolUseID: m.ToolCallID, Content: text}}})
			continue
		}
		msg := Message{Role: m.Role, Text: text}
		for _, tc := range m.ToolCalls {
			var args map[string]any
			_ = json.Unmarshal([]byte(tc.Function.Arguments), &args)
			msg.ToolUses = append(msg.ToolUses, ToolUse{Name: tc.Function.Name, Input: args})
		}
		req.Messages = appendTurn(req.Messages, msg)
	}
	return nil
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	req, err := s.record(r)
	req.API = APIChat
	if err == nil {
		err = parseChatBody(&req)
	}
	if err != nil {
		s.store(Exchange{Request: req})
		s.logf("modelstub: %s %s: bad request: %v", r.Method, r.URL.Path, err)
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": err.Error()}})
		return
	}
	reply, ok := s.reply(w, r, req)
	if !ok {
		return
	}
	id := s.nextID("chatcmpl")
	finish := "stop"
	var calls []map[string]any
	for i, tu := range reply.ToolUses {
		args, _ := json.Marshal(orEmpty(tu.Input))
		calls = append(calls, map[string]any{"index": i, "id": s.nextID("call"), "type": "function",
			"function": map[string]any{"name": tu.Name, "arguments": string(args)}})
		finish = "tool_calls"
	}
	u := reply.Usage
	prompt := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	usage := map[string]any{"prompt_tokens": prompt, "completion_tokens": u.OutputTokens, "total_tokens": prompt + u.OutputTokens,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.CacheReadInputTokens}}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": reply.Text}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "object": "chat.completion", "model": reply.Model,
			"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	send := sse(w)
	chunk := func(delta map[string]any, finish any) {
		send("", map[string]any{"id": id, "object": "chat.completion.chunk", "model": reply.Model,
			"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, p := range split(reply.Text, 3) {
		chunk(map[string]any{"content": p}, nil)
	}
	for _, c := range calls {
		chunk(map[string]any{"tool_calls": []map[string]any{c}}, nil)
	}
	chunk(map[string]any{}, finish)
	send("", map[string]any{"id": id, "object": "chat.completion.chunk", "model": reply.Model, "choices": []any{}, "usage": usage})
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
