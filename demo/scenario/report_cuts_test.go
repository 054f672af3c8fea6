package scenario

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The finished banner's lines fit 80 columns (the banner cuts its lines at
// the width), one per proof, failed or not.
func TestProofBannerFitsEightyColumns(t *testing.T) {
	t.Parallel()
	claims := []string{ClaimContinuity, ClaimDirect, ClaimGate, ClaimBeats, ClaimUsage}
	var o Outcome
	for i, c := range claims {
		p := Proof{Claim: c}
		if i == 1 {
			p.Err = os.ErrNotExist
		}
		o.Proofs = append(o.Proofs, p)
	}
	for _, closing := range []bool{false, true} {
		b := ProofBanner(o, closing)
		require.Len(t, b.Lines, len(claims))
		require.LessOrEqual(t, ansi.StringWidth(b.Title), 80, b.Title)
		for _, l := range b.Lines {
			require.LessOrEqual(t, ansi.StringWidth(l), 80, l)
		}
	}
	for _, c := range claims {
		require.NotEqual(t, c, bannerClaim(c), "%q has a banner line of its own", c)
	}
}

// sessionStore answers SessionList with fixed sessions.
type sessionStore struct {
	store.Store
	sessions []store.Session
}

func (s sessionStore) SessionList(context.Context, task.ID) ([]store.Session, error) {
	return s.sessions, nil
}

// Without --keep or --record the recordings go with the demo directory:
// the report says how many, not paths that no longer exist. With --record
// they are copied next to the console's cast, as private as it (0600).
func TestRecordingsReportNamesOnlyFilesThatStay(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	casts := []store.Session{
		{Phase: task.PhaseImplement, Attempt: 1, CastPath: ".orchestra/casts/a.cast"},
		{Phase: task.PhaseImplement, Attempt: 2, CastPath: ".orchestra/casts/b.cast"},
		{Phase: task.PhaseReview, Attempt: 1},
	}
	require.NoError(t, os.MkdirAll(filepath.Join(project, ".orchestra", "casts"), 0o700))
	for _, se := range casts[:2] {
		require.NoError(t, os.WriteFile(filepath.Join(project, filepath.FromSlash(se.CastPath)), []byte("{}\n"), 0o600))
	}
	s := &Scenario{Project: project, Opened: &coord.Opened{Store: sessionStore{sessions: casts}}}
	same := func(x string) string { return x }

	var out bytes.Buffer
	s.listRecordings(context.Background(), &out, "T", same)
	require.Equal(t, "pane recordings: 2, removed with the demo directory (--keep keeps them, --record F.cast copies them next to F.cast)\n", out.String())

	rec := filepath.Join(t.TempDir(), "demo.cast")
	s.opts.Record = rec
	out.Reset()
	s.listRecordings(context.Background(), &out, "T", same)
	for _, a := range []string{"1", "2"} {
		dst := strings.TrimSuffix(rec, ".cast") + "-implement-" + a + ".cast"
		require.Contains(t, out.String(), dst)
		fi, err := os.Stat(dst)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), dst)
	}

	s.opts.Record, s.opts.Keep = "", true
	out.Reset()
	s.listRecordings(context.Background(), &out, "T", same)
	require.Contains(t, out.String(), filepath.Join(project, ".orchestra", "casts", "a.cast"))
}
