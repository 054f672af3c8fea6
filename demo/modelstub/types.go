package modelstub

import "time"

// Rule answers the requests it matches. Rules are tried in order; the first
// whose When returns true replies. A request no rule matches gets a short
// text reply (see Fallback).
type Rule struct {
	// Name identifies the rule in the request log and in test failures.
	Name string
	// When reports whether the rule answers req.
	When func(req Request) bool
	// Reply builds the answer. It must be deterministic in req.
	Reply func(req Request) Reply
}

// Reply is what the model "says": optional text, then tool calls.
type Reply struct {
	// Text is sent as one text block before any tool_use blocks.
	Text string
	// ToolUses become tool_use blocks, in order.
	ToolUses []ToolUse
	// StopReason defaults to "tool_use" when there are tool uses and
	// "end_turn" otherwise.
	StopReason string
	// Model defaults to the model the request asked for.
	Model string
	// Usage defaults to an estimate from the request and reply sizes.
	Usage Usage
	// Hold makes the reply a stall: the server sends nothing at all and
	// keeps the request open until the client goes away or the server
	// closes. It is what a model that hangs mid-reply looks like to the
	// CLI, which sits at its spinner; the other fields are ignored.
	Hold bool
	// Limit makes the reply a refusal in the provider's own error shape
	// (limit.go): a usage limit with its reset, or an overload. The other
	// fields are ignored.
	Limit *Limit
}

// ToolUse is one tool call, e.g. {"Write", {"file_path": p, "content": c}}
// or {"Bash", {"command": "go test ./...", "description": "Run the tests"}}.
type ToolUse struct {
	Name  string
	Input map[string]any
}

// Usage is the token accounting reported for a reply, in the API's units.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// IsZero reports whether no field is set.
func (u Usage) IsZero() bool { return u == Usage{} }

// API names the wire format a request came in.
type API string

// The APIs the stub speaks.
const (
	// APIMessages is the Anthropic Messages API (Claude Code).
	APIMessages API = "anthropic-messages"
	// APIResponses is the OpenAI Responses API (Codex).
	APIResponses API = "openai-responses"
	// APIChat is the OpenAI Chat Completions API (opencode).
	APIChat API = "openai-chat"
	// APIGemini is Google's generateContent API (Gemini CLI).
	APIGemini API = "gemini"
)

// Request is a recorded request, flattened enough to match on. Every API's
// body is flattened into the same fields, so one script answers them all.
type Request struct {
	// API is the wire format the request came in; "" for other paths.
	API API
	// Method and Path are the HTTP method and URL path (no query).
	Method string
	Path   string
	// Model, System, Messages, Tools and Stream come from a Messages API
	// body; they are empty for other paths.
	Model    string
	System   string
	Messages []Message
	// Tools lists the names of the tools the request offers the model. The
	// CLI's main loop offers its tools; its side requests offer none.
	Tools  []string
	Stream bool
	// MaxTokens is the body's max_tokens.
	MaxTokens int
	// Raw is the request body as received.
	Raw []byte
	// At is when the server received the request.
	At time.Time
}

// Message is one turn of a conversation with its blocks flattened.
type Message struct {
	Role string
	// Text joins the message's text blocks with newlines.
	Text string
	// ToolUses are the assistant's tool calls in this turn.
	ToolUses []ToolUse
	// ToolResults are the results the client sent back in this turn.
	ToolResults []ToolResult
}

// ToolResult is a tool_result block sent back by the client.
type ToolResult struct {
	ToolUseID string
	// Content joins the result's text.
	Content string
	IsError bool
}

// Exchange is one answered request and the reply it got.
type Exchange struct {
	Request Request
	// Rule names the rule that replied; "" for non-message endpoints.
	Rule  string
	Reply Reply
}

// LastUser returns the latest message from the user, if any.
func (r Request) LastUser() (Message, bool) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i], true
		}
	}
	return Message{}, false
}

// HasTool reports whether the request offers the model a tool named name.
func (r Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t == name {
			return true
		}
	}
	return false
}
