package coord

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/forge"
)

// The receiver of each forge takes a delivery signed with the secret in
// that forge's header and wakes the source with the issue it names; a
// missing, bad or wrong-secret signature is 401, an oversize body 413,
// and neither wakes anything nor logs the body or the secret; an event
// the source does not read is 204.
func TestWebhookReceiverChecksEachForgesSignature(t *testing.T) {
	t.Parallel()
	const secret = "whsec-unit-test-secret"
	body := []byte(`{"action":"created","issue":{"number":12},"comment":{"body":"delivery-body-marker"}}`)
	for _, kind := range []forge.Kind{forge.Gitea, forge.Forgejo, forge.GitHub} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			var mu sync.Mutex
			var woken []forge.Hook
			h := NewWebhook(kind, secret, func(hk forge.Hook) { mu.Lock(); woken = append(woken, hk); mu.Unlock() },
				slog.New(slog.NewTextHandler(&logs, nil)))
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			post := func(event string, body []byte, sig string) int {
				t.Helper()
				req, err := http.NewRequest(http.MethodPost, srv.URL+"/hook", bytes.NewReader(body))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(forge.EventHeader(kind), event)
				if sig != "" {
					req.Header.Set(forge.SignatureHeader(kind), sig)
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				return resp.StatusCode
			}
			good := forge.Sign(kind, body, []byte(secret))

			require.Equal(t, http.StatusAccepted, post("issue_comment", body, good))
			require.Equal(t, []forge.Hook{{Event: "issue_comment", Number: 12}}, woken)

			bad := []byte(good)
			bad[len(bad)-1] ^= 1
			require.Equal(t, http.StatusUnauthorized, post("issue_comment", body, string(bad)), "bad")
			require.Equal(t, http.StatusUnauthorized, post("issue_comment", body, ""), "missing")
			require.Equal(t, http.StatusUnauthorized, post("issue_comment", body, forge.Sign(kind, body, []byte("another"))), "wrong secret")
			tampered := bytes.Replace(body, []byte("12"), []byte("13"), 1)
			require.Equal(t, http.StatusUnauthorized, post("issue_comment", tampered, good), "another body")
			huge := append(append([]byte(`{"issue":{"number":12},"pad":"`), bytes.Repeat([]byte("x"), WebhookMaxBody)...), `"}`...)
			require.Equal(t, http.StatusRequestEntityTooLarge, post("issue_comment", huge, forge.Sign(kind, huge, []byte(secret))), "oversize")
			require.EqualValues(t, 5, h.Refused())

			push := []byte(`{"ref":"refs/heads/main"}`)
			require.Equal(t, http.StatusNoContent, post("push", push, forge.Sign(kind, push, []byte(secret))), "unknown event")
			resp, err := http.Get(srv.URL + "/hook")
			require.NoError(t, err)
			_ = resp.Body.Close()
			require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

			require.Len(t, woken, 1, "only the good delivery woke the source")
			require.EqualValues(t, 1, h.Woken())
			require.Contains(t, logs.String(), "webhook delivery refused")
			require.NotContains(t, logs.String(), "delivery-body-marker", "the body is not logged")
			require.NotContains(t, logs.String(), secret, "the secret is not logged")
		})
	}
}

// wokenForge records when the issue list was read; it lists no issues,
// or a rate limit while limited.
type wokenForge struct {
	forge.Forge
	mu      sync.Mutex
	limited time.Time
	asked   []time.Time
}

func (f *wokenForge) Issues(context.Context, string, time.Time) ([]forge.Issue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, time.Now())
	if time.Now().Before(f.limited) {
		return nil, &forge.RateLimitError{Reset: f.limited}
	}
	return nil, nil
}

func (f *wokenForge) reads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.asked)
}

// A wake between polls reads the forge at once, not at the next tick, and
// the tick after stays on time; under a rate limit a wake reads nothing
// until the reset.
func TestAWakeReadsTheForgeAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &wokenForge{}
		s := NewSource(nil, SourceConfig{Forge: f, Interval: time.Minute, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = s.Run(ctx) }()
		synctest.Wait()
		require.Equal(t, 1, f.reads())

		start := time.Now()
		time.Sleep(10 * time.Second)
		s.Wake(forge.Hook{Event: "issues", Number: 4, Issue: true})
		synctest.Wait()
		require.Equal(t, 2, f.reads(), "read at once")
		s.Wake(forge.Hook{Event: "issue_comment", Number: 9}) // an issue it does not know: everything
		synctest.Wait()
		require.Equal(t, 3, f.reads())
		time.Sleep(time.Minute - 10*time.Second - time.Millisecond)
		synctest.Wait()
		require.Equal(t, 3, f.reads())
		time.Sleep(time.Millisecond)
		synctest.Wait()
		require.Equal(t, 4, f.reads(), "the tick after is on time")
		require.Equal(t, time.Minute, time.Since(start))

		f.mu.Lock()
		f.limited = time.Now().Add(5 * time.Minute)
		f.mu.Unlock()
		s.Wake(forge.Hook{Event: "issues", Issue: true}) // meets the limit
		synctest.Wait()
		require.Equal(t, 5, f.reads())
		for range 3 {
			s.Wake(forge.Hook{Event: "issues", Issue: true})
			synctest.Wait()
		}
		require.Equal(t, 5, f.reads(), "wakes under a rate limit read nothing")
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		require.Equal(t, 6, f.reads(), "read at the reset")
		cancel()
		<-done
	})
}
