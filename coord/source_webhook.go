package coord

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/orchestra-tui/orchestra-tui/forge"
)

// WebhookMaxBody is the largest webhook delivery read; a larger one is
// refused (413) unread. An issue's or comment's payload is a few
// kilobytes.
const WebhookMaxBody = 1 << 20

// Webhook receives a forge's webhook deliveries for a Source: a POST
// whose body is signed with HMAC-SHA256 under the secret (forge.
// CheckSignature) and names an issue, a comment or a review wakes the
// source to read that issue at once. The delivery's content is not
// trusted beyond its number: the source's poll reads the forge, so the
// allow list and one decision per comment hold as they do without it,
// and a delivery lost or refused costs only the latency, never a
// comment. A bad or missing signature is answered 401, counted and
// logged with the sender's address and never the body; an event the
// source does not read is answered 204.
type Webhook struct {
	kind    forge.Kind
	secret  []byte
	wake    func(forge.Hook)
	log     *slog.Logger
	refused atomic.Int64
	woken   atomic.Int64
}

// NewWebhook returns the receiver of kind's deliveries signed with secret,
// calling wake for each one that names an issue or pull request.
func NewWebhook(kind forge.Kind, secret string, wake func(forge.Hook), log *slog.Logger) *Webhook {
	if log == nil {
		log = slog.Default()
	}
	return &Webhook{kind: kind, secret: []byte(secret), wake: wake, log: log}
}

// Refused is how many deliveries were refused (bad signature, too big).
func (h *Webhook) Refused() int64 { return h.refused.Load() }

// Woken is how many deliveries woke the source.
func (h *Webhook) Woken() int64 { return h.woken.Load() }

func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST a webhook delivery", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, WebhookMaxBody))
	if err != nil {
		var big *http.MaxBytesError
		if errors.As(err, &big) {
			h.refused.Add(1)
			h.log.Warn("webhook delivery refused: too big", "from", r.RemoteAddr, "limit", WebhookMaxBody)
			http.Error(w, "delivery too big", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "read the delivery", http.StatusBadRequest)
		return
	}
	if err := forge.CheckSignature(h.kind, r.Header, body, h.secret); err != nil {
		n := h.refused.Add(1)
		h.log.Warn("webhook delivery refused", "from", r.RemoteAddr, "event", r.Header.Get(forge.EventHeader(h.kind)),
			"reason", err.Error(), "refused", n)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	hook, ok, err := forge.ParseHook(h.kind, r.Header, body)
	switch {
	case err != nil:
		http.Error(w, "not an event", http.StatusBadRequest)
	case !ok:
		w.WriteHeader(http.StatusNoContent)
	default:
		h.woken.Add(1)
		h.wake(hook)
		w.WriteHeader(http.StatusAccepted)
	}
}

// ServeWebhook serves h on l until ctx ends.
func ServeWebhook(ctx context.Context, l net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		MaxHeaderBytes: 64 << 10}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// wakeups are the issues and pull requests webhooks named since the
// source last looked; the zero value is ready.
type wakeups struct {
	mu      sync.Mutex
	c       chan struct{}
	all     bool
	numbers []int
}

func (w *wakeups) ch() chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.c == nil {
		w.c = make(chan struct{}, 1)
	}
	return w.c
}

// take returns and forgets what was named: all when an issue's own event
// (or one naming no number) came, which lists the issues again.
func (w *wakeups) take() (all bool, numbers []int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	all, numbers = w.all, w.numbers
	w.all, w.numbers = false, nil
	return all, numbers
}

// Wake asks the source to read the forge for hook's issue or pull
// request now, between its polls: what a webhook delivery does. Wakes
// that come while one is handled are read together after it.
func (s *Source) Wake(hook forge.Hook) {
	w := &s.hooks
	c := w.ch()
	w.mu.Lock()
	if hook.Issue || hook.Number <= 0 {
		w.all = true
	} else if !slices.Contains(w.numbers, hook.Number) {
		w.numbers = append(w.numbers, hook.Number)
	}
	w.mu.Unlock()
	select {
	case c <- struct{}{}:
	default:
	}
}

// sleep waits d before the next poll, reading meanwhile what webhooks
// name (pollWoken). While the forge's rate limit holds (limited) a wake
// reads nothing: the poll after the reset reads it all.
func (s *Source) sleep(ctx context.Context, d time.Duration, limited bool) error {
	t := time.NewTimer(d)
	defer t.Stop()
	woken := s.hooks.ch()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		case <-woken:
			all, numbers := s.hooks.take()
			if limited {
				continue
			}
			err := s.pollWoken(ctx, all, numbers)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var rl *forge.RateLimitError
			if errors.As(err, &rl) {
				limited = true
				t.Reset(max(time.Until(rl.Reset), s.cfg.Interval))
				s.cfg.Log.Warn("forge rate limit", "reset", rl.Reset)
			} else if err != nil {
				s.cfg.Log.Warn("forge poll (webhook) failed", "err", err)
			}
		}
	}
}

// pollWoken reads what webhooks named: the comments and line comments of
// each issue it knows (by its number or its pull request's), and
// everything (Poll) for an issue's own event or a number it does not know
// (an issue opened or labelled since the last poll).
func (s *Source) pollWoken(ctx context.Context, all bool, numbers []int) error {
	if all {
		return s.Poll(ctx)
	}
	var errs []error
	for _, num := range numbers {
		n, known, live := s.issueNamed(num)
		switch {
		case !known:
			return errors.Join(append(errs, s.Poll(ctx))...)
		case live:
			errs = append(errs, s.comments(ctx, n), s.reviews(ctx, n))
		}
	}
	return errors.Join(errs...)
}

// issueNamed finds the issue num names: its own number, or its task's
// pull request's.
func (s *Source) issueNamed(num int) (n int, known, live bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sc, ok := s.issues[num]; ok {
		return num, true, !sc.done
	}
	for n, sc := range s.issues {
		if sc.pull == num {
			return n, true, !sc.done
		}
	}
	return 0, false, false
}
