package modelstub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Google's Gemini API (POST /v1beta/models/MODEL:generateContent and
// :streamGenerateContent), as much of it as the Gemini CLI uses. A
// conversation is a list of contents with role "user" or "model", each a
// list of parts: text, functionCall, functionResponse. A streamed reply is
// server-sent events (alt=sse), each a whole GenerateContentResponse; the
// usage rides on the last.

type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction *geminiContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		MaxOutputTokens int `json:"maxOutputTokens"`
	} `json:"generationConfig"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

type geminiPart struct {
	Text         string `json:"text,omitempty"`
	Thought      bool   `json:"thought,omitempty"`
	FunctionCall *struct {
		ID   string         `json:"id,omitempty"`
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"functionCall,omitempty"`
	FunctionResponse *struct {
		ID       string          `json:"id,omitempty"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse,omitempty"`
}

// parseGeminiBody fills req from a generateContent body; model comes from
// the URL.
func parseGeminiBody(req *Request, model string) error {
	var w geminiRequest
	if err := json.Unmarshal(req.Raw, &w); err != nil {
		return fmt.Errorf("generateContent body: %w", err)
	}
	req.Model, req.MaxTokens = model, w.GenerationConfig.MaxOutputTokens
	if w.SystemInstruction != nil {
		req.System = geminiText(*w.SystemInstruction)
	}
	for _, t := range w.Tools {
		for _, f := range t.FunctionDeclarations {
			req.Tools = append(req.Tools, f.Name)
		}
	}
	for _, c := range w.Contents {
		msg := Message{Role: "user", Text: geminiText(c)}
		if c.Role == "model" {
			msg.Role = "assistant"
		}
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				msg.ToolUses = append(msg.ToolUses, ToolUse{Name: p.FunctionCall.Name, Input: p.FunctionCall.Args})
			}
			if p.FunctionResponse != nil {
				msg.ToolResults = append(msg.ToolResults, ToolResult{ToolUseID: p.FunctionResponse.ID, Content: string(p.FunctionResponse.Response)})
			}
		}
		req.Messages = appendTurn(req.Messages, msg)
	}
	return nil
}

func geminiText(c geminiContent) string {
	var texts []string
	for _, p := range c.Parts {
		if p.Text != "" && !p.Thought {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// handleGemini serves POST /v1beta/models/{call}, where call is
// MODEL:generateContent, MODEL:streamGenerateContent or MODEL:countTokens.
func (s *Server) handleGemini(w http.ResponseWriter, r *http.Request) {
	model, method, _ := strings.Cut(r.PathValue("call"), ":")
	req, err := s.record(r)
	req.API = APIGemini
	if method == "countTokens" {
		s.store(Exchange{Request: req})
		writeJSON(w, http.StatusOK, map[string]int{"totalTokens": len(req.Raw)/4 + 1})
		return
	}
	if method != "generateContent" && method != "streamGenerateContent" {
		s.handleOther(w, r)
		return
	}
	req.Stream = method == "streamGenerateContent"
	if err == nil {
		err = parseGeminiBody(&req, model)
	}
	if err != nil {
		s.store(Exchange{Request: req})
		s.logf("modelstub: %s %s: bad request: %v", r.Method, r.URL.Path, err)
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": 400, "status": "INVALID_ARGUMENT", "message": err.Error()}})
		return
	}
	reply, ok := s.reply(w, r, req)
	if !ok {
		return
	}
	var parts []map[string]any
	if reply.Text != "" {
		parts = append(parts, map[string]any{"text": reply.Text})
	}
	for _, tu := range reply.ToolUses {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": s.nextID("call"), "name": tu.Name, "args": orEmpty(tu.Input)}})
	}
	u := reply.Usage
	prompt := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	final := map[string]any{
		"candidates": []map[string]any{{"index": 0, "finishReason": "STOP",
			"content": map[string]any{"role": "model", "parts": parts}}},
		"usageMetadata": map[string]any{"promptTokenCount": prompt, "candidatesTokenCount": u.OutputTokens,
			"cachedContentTokenCount": u.CacheReadInputTokens, "totalTokenCount": prompt + u.OutputTokens},
		"modelVersion": reply.Model,
		"responseId":   s.nextID("resp"),
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, final)
		return
	}
	send := sse(w)
	// The text first in pieces, as the service streams it, then the tool
	// calls, the finish reason and the usage in the last event.
	if reply.Text != "" {
		pieces := split(reply.Text, 3)
		for _, p := range pieces[:len(pieces)-1] {
			send("", map[string]any{"candidates": []map[string]any{{"index": 0,
				"content": map[string]any{"role": "model", "parts": []map[string]any{{"text": p}}}}}, "modelVersion": reply.Model})
		}
		parts[0] = map[string]any{"text": pieces[len(pieces)-1]}
	}
	send("", final)
}
