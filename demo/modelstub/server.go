package modelstub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server is the scripted model server. Set the exported fields before Start.
type Server struct {
	// Logf, when set, receives one line per request and every unknown path.
	Logf func(format string, args ...any)
	// Now stamps requests; it defaults to time.Now.
	Now func() time.Time
	// Fallback answers message requests no rule matches. It defaults to a
	// short text reply ending the turn, which is what the CLI's side
	// requests (titles, topic detection, quota probes) need.
	Fallback func(req Request) Reply
	// Addr is the address to listen on; it defaults to 127.0.0.1:0, an
	// OS-chosen port on the loopback interface.
	Addr string

	rules []Rule

	quitOnce sync.Once

	mu        sync.Mutex
	exchanges []Exchange
	ids       int
	srv       *http.Server
	done      chan struct{}
	// quit is closed when Close begins, releasing held replies: Shutdown
	// waits for handlers to return but does not cancel their requests.
	quit chan struct{}
}

// New returns a server that answers message requests with rules, in order.
func New(rules []Rule) *Server {
	return &Server{rules: append([]Rule(nil), rules...)}
}

// Start listens on Addr (by default an OS-chosen port on 127.0.0.1) and
// serves in the background. It returns the base URL to give the CLI as ANTHROPIC_BASE_URL.
func (s *Server) Start() (string, error) {
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Fallback == nil {
		s.Fallback = func(Request) Reply { return Reply{Text: "OK."} }
	}
	addr := s.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("model stub: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.handleMessages)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.handleCountTokens)
	mux.HandleFunc("POST /v1/responses", s.handleResponses)
	mux.HandleFunc("POST /v1beta/models/{call}", s.handleGemini)
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("/", s.handleOther)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.done, s.quit = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
	return "http://" + ln.Addr().String(), nil
}

// Close stops the server, waiting briefly for replies in flight. Held
// replies (Reply.Hold) are released at once, so a stalled client never
// keeps Close from returning.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	s.quitOnce.Do(func() { close(s.quit) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	<-s.done
	if err != nil {
		return fmt.Errorf("model stub: close: %w", err)
	}
	return nil
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.exchanges))
	for i, e := range s.exchanges {
		out[i] = e.Request
	}
	return out
}

// Exchanges returns every request with the rule and reply that answered it.
func (s *Server) Exchanges() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Exchange(nil), s.exchanges...)
}

// Served returns the usage of every reply the server sent (a held reply
// sends none), in arrival order, side requests included: what a CLI
// against it was billed.
func (s *Server) Served() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Exchange
	for _, e := range s.exchanges {
		if e.Rule == "" || e.Reply.Hold {
			continue // not a message request (count_tokens, an unknown path), or never answered
		}
		out = append(out, e)
	}
	return out
}

func (s *Server) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// record reads the body and stamps the request.
func (s *Server) record(r *http.Request) (Request, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	req := Request{Method: r.Method, Path: r.URL.Path, Raw: body, At: s.Now()}
	return req, err
}

func (s *Server) store(e Exchange) {
	s.mu.Lock()
	s.exchanges = append(s.exchanges, e)
	s.mu.Unlock()
}

// nextID returns a deterministic id with the given prefix.
func (s *Server) nextID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%s_stub%06d", prefix, s.ids)
}

func (s *Server) handleMessages(w http.ResponseWriter, r *http.Request) {
	req, err := s.record(r)
	req.API = APIMessages
	if err == nil {
		err = parseMessagesBody(&req)
	}
	if err != nil {
		s.store(Exchange{Request: req})
		s.logf("modelstub: %s %s: bad request: %v", r.Method, r.URL.Path, err)
		writeAPIError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	reply, ok := s.reply(w, r, req)
	if !ok {
		return
	}
	if req.Stream {
		s.writeStream(w, reply)
		return
	}
	writeJSON(w, http.StatusOK, s.messageJSON(reply, true))
}

// reply answers a parsed request with the first matching rule, records the
// exchange and logs it. It returns false when the reply is a stall, after
// holding the request open until the client or the server gives up.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, req Request) (Reply, bool) {
	name, reply := s.answer(req)
	reply = s.complete(req, reply)
	s.store(Exchange{Request: req, Rule: name, Reply: reply})
	// The tokens each reply reports are logged, so a test's log shows what
	// the stub served beside what the console recorded (Served sums them).
	u := reply.Usage
	s.logf("modelstub: %s %s model=%s stream=%v tools=%d messages=%d -> %s (%d tool uses, %s; served %d in, %d out, %d cache write, %d cache read)",
		r.Method, r.URL.Path, req.Model, req.Stream, len(req.Tools), len(req.Messages), name, len(reply.ToolUses), reply.StopReason,
		u.InputTokens, u.OutputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens)
	if reply.Hold {
		s.hold(r)
		return reply, false
	}
	if reply.Limit != nil {
		s.writeLimit(w, req, *reply.Limit)
		return reply, false
	}
	return reply, true
}

// hold keeps a request open, sending nothing, until the client cancels it
// or the server closes.
func (s *Server) hold(r *http.Request) {
	select {
	case <-r.Context().Done():
		s.logf("modelstub: held %s %s released: the client went away", r.Method, r.URL.Path)
	case <-s.quit:
		s.logf("modelstub: held %s %s released: the server is closing", r.Method, r.URL.Path)
	}
}

// answer picks the first matching rule, or the fallback.
func (s *Server) answer(req Request) (string, Reply) {
	for _, rule := range s.rules {
		if rule.When != nil && rule.When(req) {
			return rule.Name, rule.Reply(req)
		}
	}
	return "fallback", s.Fallback(req)
}

// complete fills a reply's defaults: stop reason, model and usage.
func (s *Server) complete(req Request, r Reply) Reply {
	r.ToolUses = adapt(req, r.ToolUses)
	if r.Hold {
		return Reply{Hold: true, Model: req.Model}
	}
	if r.Limit != nil {
		return Reply{Limit: r.Limit, Model: req.Model}
	}
	if r.StopReason == "" {
		r.StopReason = "end_turn"
		if len(r.ToolUses) > 0 {
			r.StopReason = "tool_use"
		}
	}
	if r.Model == "" {
		r.Model = req.Model
	}
	if r.Usage.IsZero() {
		// A rough, deterministic estimate: four bytes a token.
		out := len(r.Text)
		for _, tu := range r.ToolUses {
			b, _ := json.Marshal(tu.Input)
			out += len(tu.Name) + len(b)
		}
		r.Usage = Usage{InputTokens: len(req.Raw)/4 + 1, OutputTokens: out/4 + 1}
	}
	return r
}

func (s *Server) handleCountTokens(w http.ResponseWriter, r *http.Request) {
	req, err := s.record(r)
	if err == nil {
		err = parseMessagesBody(&req)
	}
	s.store(Exchange{Request: req})
	if err != nil {
		writeAPIError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	s.logf("modelstub: %s %s model=%s", r.Method, r.URL.Path, req.Model)
	writeJSON(w, http.StatusOK, map[string]int{"input_tokens": len(req.Raw)/4 + 1})
}

// handleOther answers any other path the CLI calls with an empty JSON
// object, which it treats as "nothing to report", and logs it so a new
// CLI version's calls show up in the test log.
func (s *Server) handleOther(w http.ResponseWriter, r *http.Request) {
	req, _ := s.record(r)
	s.store(Exchange{Request: req})
	s.logf("modelstub: unknown path %s %s?%s (%d bytes)", r.Method, r.URL.Path, r.URL.RawQuery, len(req.Raw))
	writeJSON(w, http.StatusOK, map[string]any{})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeAPIError(w http.ResponseWriter, status int, kind, msg string) {
	writeJSON(w, status, map[string]any{
		"type":  "error",
		"error": map[string]string{"type": kind, "message": msg},
	})
}
