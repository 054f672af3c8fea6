package modelstub

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// messageJSON renders a reply as a Messages API message. With full false it
// is the empty shell that opens a stream (message_start): no content, no
// stop reason, output tokens not yet counted.
func (s *Server) messageJSON(r Reply, full bool) wireMessageOut {
	m := wireMessageOut{
		ID:      s.nextID("msg"),
		Type:    "message",
		Role:    "assistant",
		Model:   r.Model,
		Content: []map[string]any{},
		Usage:   r.Usage,
	}
	if !full {
		m.Usage.OutputTokens = 1
		return m
	}
	m.StopReason = &r.StopReason
	m.Content = append(m.Content, s.blocks(r)...)
	return m
}

// blocks returns the reply's content blocks with their tool ids assigned.
func (s *Server) blocks(r Reply) []map[string]any {
	var out []map[string]any
	if r.Text != "" {
		out = append(out, map[string]any{"type": "text", "text": r.Text})
	}
	for _, tu := range r.ToolUses {
		input := tu.Input
		if input == nil {
			input = map[string]any{}
		}
		out = append(out, map[string]any{"type": "tool_use", "id": s.nextID("toolu"), "name": tu.Name, "input": input})
	}
	return out
}

// writeStream sends the reply as server-sent events in the order the API
// uses: message_start, per block start/deltas/stop, message_delta with the
// stop reason and usage, message_stop. Text and tool input are split into
// several deltas so clients exercise their reassembly.
func (s *Server) writeStream(w http.ResponseWriter, r Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send("message_start", map[string]any{"type": "message_start", "message": s.messageJSON(r, false)})
	send("ping", map[string]any{"type": "ping"})
	for i, b := range s.blocks(r) {
		switch b["type"] {
		case "text":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			for _, part := range split(b["text"].(string), 3) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": part}})
			}
		case "tool_use":
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			input, _ := json.Marshal(b["input"])
			for _, part := range split(string(input), 3) {
				send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": r.StopReason, "stop_sequence": nil},
		"usage": r.Usage})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// split cuts s into at most n pieces of about equal size, on rune
// boundaries. An empty s yields no pieces.
func split(s string, n int) []string {
	runes := []rune(s)
	if len(runes) == 0 {
		return nil
	}
	size := (len(runes) + n - 1) / n
	var out []string
	for len(runes) > 0 {
		k := min(size, len(runes))
		out = append(out, string(runes[:k]))
		runes = runes[k:]
	}
	return out
}
