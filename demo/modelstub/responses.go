package modelstub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The OpenAI Responses API (POST /v1/responses), as much of it as the Codex
// CLI uses: a request carries the whole conversation as a flat list of
// input items (messages, function calls and their outputs, reasoning), and
// the reply streams as server-sent events ending in response.completed,
// which carries the usage.

type responsesRequest struct {
	Model        string            `json:"model"`
	Instructions string            `json:"instructions"`
	Input        json.RawMessage   `json:"input"`
	Tools        []responsesTool   `json:"tools"`
	Stream       bool              `json:"stream"`
	MaxTokens    int               `json:"max_output_tokens"`
	Metadata     map[string]string `json:"metadata"`
}

type responsesTool struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
}

// parseResponsesBody fills req from a Responses API body. Input items are
// grouped into turns the way the Messages API has them: an assistant turn
// is a run of assistant messages, function calls and reasoning; a user turn
// is a run of user or developer messages and function call outputs.
func parseResponsesBody(req *Request) error {
	var w responsesRequest
	if err := json.Unmarshal(req.Raw, &w); err != nil {
		return fmt.Errorf("responses body: %w", err)
	}
	req.Model, req.Stream, req.MaxTokens, req.System = w.Model, w.Stream, w.MaxTokens, w.Instructions
	for _, t := range w.Tools {
		if t.Name != "" {
			req.Tools = append(req.Tools, t.Name)
		} else {
			req.Tools = append(req.Tools, t.Type)
		}
	}
	var items []responsesItem
	raw := strings.TrimSpace(string(w.Input))
	switch {
	case raw == "" || raw == "null":
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(w.Input, &s); err != nil {
			return fmt.Errorf("input: %w", err)
		}
		items = []responsesItem{{Type: "message", Role: "user", Content: w.Input}}
	default:
		if err := json.Unmarshal(w.Input, &items); err != nil {
			return fmt.Errorf("input: %w", err)
		}
	}
	for _, it := range items {
		role := "user"
		var msg Message
		switch it.Type {
		case "message", "":
			text, err := responsesText(it.Content)
			if err != nil {
				return fmt.Errorf("input message: %w", err)
			}
			if it.Role == "assistant" {
				role = "assistant"
			}
			msg.Text = text
		case "function_call":
			role = "assistant"
			var args map[string]any
			_ = json.Unmarshal([]byte(it.Arguments), &args)
			msg.ToolUses = []ToolUse{{Name: it.Name, Input: args}}
		case "custom_tool_call":
			role = "assistant"
			msg.ToolUses = []ToolUse{{Name: it.Name, Input: map[string]any{"input": it.Input}}}
		case "reasoning", "local_shell_call", "web_search_call":
			role = "assistant"
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			msg.ToolResults = []ToolResult{{ToolUseID: it.CallID, Content: outputText(it.Output)}}
		default:
			continue
		}
		msg.Role = role
		req.Messages = appendTurn(req.Messages, msg)
	}
	return nil
}

// appendTurn adds msg to msgs, merged into the last message when that one
// has the same role.
func appendTurn(msgs []Message, msg Message) []Message {
	if n := len(msgs); n > 0 && msgs[n-1].Role == msg.Role {
		last := &msgs[n-1]
		if msg.Text != "" {
			if last.Text != "" {
				last.Text += "\n"
			}
			last.Text += msg.Text
		}
		last.ToolUses = append(last.ToolUses, msg.ToolUses...)
		last.ToolResults = append(last.ToolResults, msg.ToolResults...)
		return msgs
	}
	return append(msgs, msg)
}

// responsesText joins the text parts of a message's content, a string or a
// list of input_text/output_text parts.
func responsesText(raw json.RawMessage) (string, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", err
	}
	var texts []string
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// outputText is a function call's output: a string, or content parts.
func outputText(raw json.RawMessage) string {
	if s, err := responsesText(raw); err == nil {
		return s
	}
	return string(raw)
}

func (s *Server) handleResponses(w http.ResponseWriter, r *http.Request) {
	req, err := s.record(r)
	req.API = APIResponses
	if err == nil {
		err = parseResponsesBody(&req)
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
	id := s.nextID("resp")
	items := s.responsesItems(reply)
	usage := responsesUsage(reply.Usage)
	resp := func(status string, out []map[string]any, u any) map[string]any {
		return map[string]any{"id": id, "object": "response", "model": reply.Model, "status": status, "output": out, "usage": u}
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, resp("completed", items, usage))
		return
	}
	send := sse(w)
	seq := 0
	event := func(kind string, data map[string]any) {
		data["type"] = kind
		data["sequence_number"] = seq
		seq++
		send(kind, data)
	}
	event("response.created", map[string]any{"response": resp("in_progress", []map[string]any{}, nil)})
	event("response.in_progress", map[string]any{"response": resp("in_progress", []map[string]any{}, nil)})
	for i, it := range items {
		event("response.output_item.added", map[string]any{"output_index": i, "item": withStatus(it, "in_progress")})
		if it["type"] == "message" {
			text := reply.Text
			part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
			event("response.content_part.added", map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0, "part": part})
			for _, d := range split(text, 3) {
				event("response.output_text.delta", map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0, "delta": d})
			}
			event("response.output_text.done", map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0, "text": text})
			part["text"] = text
			event("response.content_part.done", map[string]any{"item_id": it["id"], "output_index": i, "content_index": 0, "part": part})
		}
		if it["type"] == "function_call" {
			for _, d := range split(it["arguments"].(string), 3) {
				event("response.function_call_arguments.delta", map[string]any{"item_id": it["id"], "output_index": i, "delta": d})
			}
			event("response.function_call_arguments.done", map[string]any{"item_id": it["id"], "output_index": i, "arguments": it["arguments"]})
		}
		event("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	event("response.completed", map[string]any{"response": resp("completed", items, usage)})
}

// responsesItems renders a reply as Responses API output items: a message
// with its text, then one function_call per tool call.
func (s *Server) responsesItems(r Reply) []map[string]any {
	var out []map[string]any
	if r.Text != "" {
		out = append(out, map[string]any{"type": "message", "id": s.nextID("msg"), "role": "assistant", "status": "completed",
			"content": []map[string]any{{"type": "output_text", "text": r.Text, "annotations": []any{}}}})
	}
	for _, tu := range r.ToolUses {
		args, _ := json.Marshal(orEmpty(tu.Input))
		out = append(out, map[string]any{"type": "function_call", "id": s.nextID("fc"), "call_id": s.nextID("call"),
			"name": tu.Name, "arguments": string(args), "status": "completed"})
	}
	return out
}

// responsesUsage is u in the Responses API's shape, where input_tokens
// includes the cached tokens. Cache writes have no column of their own
// there; they are input tokens.
func responsesUsage(u Usage) map[string]any {
	in := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	return map[string]any{
		"input_tokens":          in,
		"input_tokens_details":  map[string]any{"cached_tokens": u.CacheReadInputTokens},
		"output_tokens":         u.OutputTokens,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":          in + u.OutputTokens,
	}
}

func withStatus(it map[string]any, status string) map[string]any {
	out := make(map[string]any, len(it))
	for k, v := range it {
		out[k] = v
	}
	out["status"] = status
	if out["type"] == "message" {
		out["content"] = []any{}
	}
	if out["type"] == "function_call" {
		out["arguments"] = ""
	}
	return out
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// sse returns a function that writes one server-sent event and flushes.
// An empty event name writes a data-only event.
func sse(w http.ResponseWriter) func(event string, data any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	return func(event string, data any) {
		b, _ := json.Marshal(data)
		if event != "" {
			fmt.Fprintf(w, "event: %s\n", event)
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
}
