package modelstub

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// LimitKind names a provider's refusal that is weather, not a fault of the
// request: a usage limit with a reset time, or an overloaded service.
type LimitKind string

// The refusals the stub can answer with.
const (
	// LimitUsage is a usage (or rate) limit reached, with a reset time:
	// HTTP 429 in the provider's own error shape and headers.
	LimitUsage LimitKind = "usage"
	// LimitOverloaded is a provider too busy to answer, which the CLIs
	// retry on their own: 529 overloaded_error (Anthropic), 503 elsewhere.
	LimitOverloaded LimitKind = "overloaded"
)

// Limit is a refusal answer: the error body, status and headers of the
// request's provider for Kind, with the reset Reset ahead of the request.
type Limit struct {
	Kind  LimitKind
	Reset time.Duration
}

// writeLimit answers req with l in the shape of req's API.
func (s *Server) writeLimit(w http.ResponseWriter, req Request, l Limit) {
	secs := int((l.Reset + time.Second - 1) / time.Second)
	resetAt := req.At.Add(l.Reset)
	h := w.Header()
	if secs > 0 {
		h.Set("retry-after", strconv.Itoa(secs))
	}
	switch req.API {
	case APIMessages:
		if l.Kind == LimitOverloaded {
			writeJSON(w, 529, map[string]any{"type": "error", "error": map[string]string{"type": "overloaded_error", "message": "Overloaded"}})
			return
		}
		h.Set("anthropic-ratelimit-unified-status", "rejected")
		h.Set("anthropic-ratelimit-unified-reset", strconv.FormatInt(resetAt.Unix(), 10))
		h.Set("anthropic-ratelimit-unified-representative-claim", "five_hour")
		h.Set("anthropic-ratelimit-unified-5h-status", "rejected")
		h.Set("anthropic-ratelimit-unified-5h-reset", strconv.FormatInt(resetAt.Unix(), 10))
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"type": "error", "error": map[string]string{
			"type": "rate_limit_error", "message": "This request would exceed your account's rate limit. Please try again later."}})
	case APIResponses:
		if l.Kind == LimitOverloaded {
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": map[string]any{
				"type": "server_is_overloaded", "code": "server_is_overloaded", "message": "Our servers are currently overloaded. Please try again later."}})
			return
		}
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{
			"type": "usage_limit_reached", "message": "The usage limit has been reached", "plan_type": "plus",
			"resets_at": resetAt.Unix(), "resets_in_seconds": secs}})
	case APIGemini:
		if l.Kind == LimitOverloaded {
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": map[string]any{
				"code": 503, "status": "UNAVAILABLE", "message": "The model is overloaded. Please try again later."}})
			return
		}
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{
			"code": 429, "status": "RESOURCE_EXHAUSTED",
			"message": "You exceeded your current quota, please check your plan and billing details.",
			"details": []map[string]any{
				{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []map[string]any{{
					"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
					"quotaId":     "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}}},
				{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": fmt.Sprintf("%ds", secs)},
			}}})
	default: // the OpenAI Chat Completions API, and anything else
		if l.Kind == LimitOverloaded {
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": map[string]any{
				"type": "server_error", "code": "server_is_overloaded", "message": "The server is overloaded. Please try again later."}})
			return
		}
		h.Set("x-ratelimit-reset-requests", strconv.Itoa(secs)+"s")
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{
			"type": "rate_limit_exceeded", "code": "rate_limit_exceeded",
			"message": fmt.Sprintf("Rate limit reached for requests. Please try again in %ds.", secs)}})
	}
}

// LimitWindow is a usage limit that starts the first time a request of the
// phase script's turn Turn arrives and lasts For: every main-loop request
// within the window is answered with the limit (Kind LimitUsage unless
// set), its reset at the window's end. After the window the script's rules
// answer as before, so the CLI's next request (its own retry, or the one a
// typed "continue" sends) picks the phase up where it stopped.
type LimitWindow struct {
	Turn int
	For  time.Duration
	Kind LimitKind

	mu    sync.Mutex
	start time.Time
}

// Rule is the window as the first rule of a script: it matches main-loop
// requests of a phase brief from the window's turn on, while it is open.
func (lw *LimitWindow) Rule() Rule {
	return Rule{
		Name: "limit",
		When: func(req Request) bool {
			if !req.IsMainLoop() {
				return false
			}
			b, ok := FindBrief(req)
			if !ok {
				return false
			}
			done := 0
			for _, m := range req.Messages[b.Index+1:] {
				if m.Role == "assistant" {
					done++
				}
			}
			if done < lw.Turn {
				return false
			}
			lw.mu.Lock()
			defer lw.mu.Unlock()
			if lw.start.IsZero() {
				lw.start = req.At
			}
			return req.At.Before(lw.start.Add(lw.For))
		},
		Reply: func(req Request) Reply {
			lw.mu.Lock()
			reset := lw.start.Add(lw.For).Sub(req.At)
			lw.mu.Unlock()
			kind := lw.Kind
			if kind == "" {
				kind = LimitUsage
			}
			return Reply{Limit: &Limit{Kind: kind, Reset: reset}}
		},
	}
}

// ResetAt returns when the window ends, zero before it has started.
func (lw *LimitWindow) ResetAt() time.Time {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.start.IsZero() {
		return time.Time{}
	}
	return lw.start.Add(lw.For)
}
