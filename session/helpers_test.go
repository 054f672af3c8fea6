package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// waitLimit bounds every wait in these tests; nothing waits by sleeping.
const waitLimit = 10 * time.Second

// bundle is what setup returns.
type bundle struct {
	s    *Session
	cast string
}

// shSpec is a test harness that runs script under /bin/sh -c.
func shSpec(script, ready string) Spec {
	return Spec{
		Name:          "test",
		Argv:          []string{"/bin/sh", "-c", script},
		Env:           []string{"PATH", "HOME"},
		Delivery:      DeliveryType,
		Ready:         ready,
		Submit:        `\r`,
		Quiet:         Duration{100 * time.Millisecond},
		LaunchTimeout: Duration{waitLimit},
	}
}

// setup starts spec at 80x24, recording to a temporary cast file, and stops
// the session when the test ends.
func setup(t *testing.T, spec Spec, mods ...func(*Params)) bundle {
	t.Helper()
	dir := t.TempDir()
	p := Params{
		Spec: spec, Dir: dir, Cols: 80, Rows: 24,
		Environ:  []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir},
		CastPath: filepath.Join(dir, "runs", "session.cast"),
	}
	for _, m := range mods {
		m(&p)
	}
	s, err := Start(p)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop(time.Second) })
	return bundle{s: s, cast: p.CastPath}
}

// waitFor waits on the session's change signal until cond holds.
func waitFor(t *testing.T, s *Session, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		ch := s.changeSignal()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			require.Failf(t, "timed out", "waiting for %s; screen:\n%s", what, s.View().Text())
		}
	}
}

// waitText waits until the screen shows sub.
func waitText(t *testing.T, s *Session, sub string) {
	t.Helper()
	waitFor(t, s, "screen to show "+sub, func() bool { return strings.Contains(s.View().Text(), sub) })
}

// waitDone waits for the session to end.
func waitDone(t *testing.T, s *Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	select {
	case <-s.Done():
	case <-ctx.Done():
		require.Fail(t, "session did not exit", s.View().Text())
	}
}
