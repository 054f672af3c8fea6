package task

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestApplyRejectsIllegalMoves(t *testing.T) {
	t.Parallel()
	next, err := Apply(StateQueued, ActLease)
	require.NoError(t, err)
	require.Equal(t, StateLeased, next)

	_, err = Apply(StateCompleted, ActLease)
	var te *TransitionError
	require.ErrorAs(t, err, &te)
	require.Equal(t, StateCompleted, te.From)
	require.Contains(t, err.Error(), "ended")

	_, err = Apply(StateQueued, ActApprove)
	require.ErrorAs(t, err, &te)
}

func TestEveryStateHasAWayOutUnlessTerminal(t *testing.T) {
	t.Parallel()
	for _, s := range States {
		if s.Terminal() {
			// An ended task moves only when the operator retries it, and
			// an approved one not even then.
			want := []Action{ActRetry}
			if s == StateMerged {
				want = nil
			}
			if s == StateCompleted {
				// Approved, not yet merged: the merge queue takes it.
				want = []Action{ActQueueMerge, ActLand}
			}
			require.Equal(t, want, Allowed(s), s)
			continue
		}
		require.NotEmpty(t, Allowed(s), s)
		_, err := Apply(s, ActCancel)
		require.NoError(t, err, "every live state can be cancelled: %s", s)
	}
}

func TestPipeline(t *testing.T) {
	t.Parallel()
	p, err := ParsePipeline("plan, implement review")
	require.NoError(t, err)
	require.Equal(t, Pipeline{PhasePlan, PhaseImplement, PhaseReview}, p)
	next, ok := p.Next(PhaseImplement)
	require.True(t, ok)
	require.Equal(t, PhaseReview, next)
	_, ok = p.Next(PhaseReview)
	require.False(t, ok)

	_, err = ParsePipeline("plan,deploy")
	require.ErrorContains(t, err, `unknown phase "deploy"`)
	_, err = ParsePipeline("implement,plan")
	require.ErrorContains(t, err, "out of order")
	_, err = ParsePipeline("")
	require.ErrorContains(t, err, "empty")
}

func TestTaskValidate(t *testing.T) {
	t.Parallel()
	err := Task{Title: "x", Goal: "y", Pipeline: DefaultPipeline()}.Validate()
	require.ErrorIs(t, err, ErrNoVerify)
	require.NoError(t, Task{Title: "x", Goal: "y", Verify: "go test ./...", Pipeline: DefaultPipeline()}.Validate())
}

func TestIDsSortByTime(t *testing.T) {
	t.Parallel()
	a := NewID(time.Unix(1000, 0))
	b := NewID(time.Unix(2000, 0))
	require.Less(t, string(a), string(b))
	require.Len(t, a.Short(), 8)
}

func TestEveryExampleArtifactIsValid(t *testing.T) {
	t.Parallel()
	for _, p := range Phases {
		require.NoError(t, ValidateArtifactBytes(p, []byte(Example(p))), p)
		require.NotEmpty(t, Job(p))
		require.NotEmpty(t, Schema(p))
	}
}

func refusalReason(t *testing.T, err error) Reason {
	t.Helper()
	var r *Refusal
	require.True(t, errors.As(err, &r), "want a *Refusal, got %v", err)
	return r.Reason
}

func TestReadArtifactRefusals(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, StateDir)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(root, ArtifactPath(PhasePlan))

	_, err := ReadArtifact(root, PhasePlan)
	require.Equal(t, ReasonArtifactMissing, refusalReason(t, err))

	require.NoError(t, os.WriteFile(path, []byte("{not json"), 0o644))
	_, err = ReadArtifact(root, PhasePlan)
	require.Equal(t, ReasonArtifactNotJSON, refusalReason(t, err))
	require.ErrorContains(t, err, ".orchestra/plan.json")

	require.NoError(t, os.WriteFile(path, []byte(`{"summary":"x","steps":[]}`), 0o644))
	_, err = ReadArtifact(root, PhasePlan)
	require.Equal(t, ReasonArtifactSchema, refusalReason(t, err))
	require.ErrorContains(t, err, "/steps")

	big := make([]byte, MaxArtifactBytes+1)
	require.NoError(t, os.WriteFile(path, big, 0o644))
	_, err = ReadArtifact(root, PhasePlan)
	require.Equal(t, ReasonArtifactTooLarge, refusalReason(t, err))

	outside := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(outside, []byte(Example(PhasePlan)), 0o644))
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Symlink(outside, path))
	_, err = ReadArtifact(root, PhasePlan)
	require.Equal(t, ReasonArtifactSymlink, refusalReason(t, err))

	// A state directory that is itself a link out of the worktree.
	root2 := t.TempDir()
	elsewhere := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(elsewhere, "plan.json"), []byte(Example(PhasePlan)), 0o644))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(root2, StateDir)))
	_, err = ReadArtifact(root2, PhasePlan)
	require.Equal(t, ReasonArtifactOutside, refusalReason(t, err))

	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o755))
	_, err = ReadArtifact(root, PhasePlan)
	require.Equal(t, ReasonArtifactNotFile, refusalReason(t, err))

	require.NoError(t, os.Remove(path))
	require.NoError(t, os.WriteFile(path, []byte(Example(PhasePlan)), 0o644))
	data, err := ReadArtifact(root, PhasePlan)
	require.NoError(t, err)
	require.JSONEq(t, Example(PhasePlan), string(data))
}

func TestEveryReasonHasASentence(t *testing.T) {
	t.Parallel()
	seen := map[Reason]bool{}
	for _, r := range Reasons {
		require.False(t, seen[r], "reason listed twice: %s", r)
		seen[r] = true
		require.True(t, r.Known(), "reason %s has no sentence", r)
		s := r.Sentence()
		require.Regexp(t, `^[A-Z].*\.$`, s, "sentence of %s", r)
	}
	require.Len(t, sentences, len(Reasons), "a sentence exists for a reason missing from Reasons")
	require.Equal(t, "Refused (made-up).", Reason("made-up").Sentence())
}
