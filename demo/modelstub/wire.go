package modelstub

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The request side of the Messages API, as much of it as the stub reads.
// Content and system can be a string or a list of blocks; tool_result
// content likewise.

type wireRequest struct {
	Model     string          `json:"model"`
	System    json.RawMessage `json:"system"`
	Messages  []wireMessage   `json:"messages"`
	Tools     []wireTool      `json:"tools"`
	Stream    bool            `json:"stream"`
	MaxTokens int             `json:"max_tokens"`
}

type wireTool struct {
	Name string `json:"name"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Name      string          `json:"name"`
	Input     map[string]any  `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// parseMessagesBody fills the Messages API fields of req from its Raw body.
func parseMessagesBody(req *Request) error {
	var w wireRequest
	if err := json.Unmarshal(req.Raw, &w); err != nil {
		return fmt.Errorf("messages body: %w", err)
	}
	req.Model, req.Stream, req.MaxTokens = w.Model, w.Stream, w.MaxTokens
	sys, err := flattenText(w.System)
	if err != nil {
		return fmt.Errorf("system: %w", err)
	}
	req.System = sys
	for _, t := range w.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	for i, m := range w.Messages {
		msg, err := flattenMessage(m)
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		req.Messages = append(req.Messages, msg)
	}
	return nil
}

func flattenMessage(m wireMessage) (Message, error) {
	out := Message{Role: m.Role}
	blocks, err := decodeBlocks(m.Content)
	if err != nil {
		return out, err
	}
	var texts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "tool_use":
			out.ToolUses = append(out.ToolUses, ToolUse{Name: b.Name, Input: b.Input})
		case "tool_result":
			content, err := flattenText(b.Content)
			if err != nil {
				return out, fmt.Errorf("tool_result %s: %w", b.ToolUseID, err)
			}
			out.ToolResults = append(out.ToolResults, ToolResult{ToolUseID: b.ToolUseID, Content: content, IsError: b.IsError})
		}
	}
	out.Text = strings.Join(texts, "\n")
	return out, nil
}

// decodeBlocks reads content that is either a string (one text block) or a
// list of blocks.
func decodeBlocks(raw json.RawMessage) ([]wireBlock, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []wireBlock{{Type: "text", Text: s}}, nil
	}
	var blocks []wireBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, err
	}
	return blocks, nil
}

// flattenText joins the text of content that is a string or a block list.
func flattenText(raw json.RawMessage) (string, error) {
	blocks, err := decodeBlocks(raw)
	if err != nil {
		return "", err
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// The response side.

type wireUsage = Usage

type wireMessageOut struct {
	ID           string           `json:"id"`
	Type         string           `json:"type"`
	Role         string           `json:"role"`
	Model        string           `json:"model"`
	Content      []map[string]any `json:"content"`
	StopReason   *string          `json:"stop_reason"`
	StopSequence *string          `json:"stop_sequence"`
	Usage        wireUsage        `json:"usage"`
}
