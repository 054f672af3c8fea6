package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

func TestScriptEntryMatching(t *testing.T) {
	t.Parallel()
	s := Script{Phases: map[task.Phase][]Entry{
		task.PhaseImplement: {{Attempt: 1, Behave: BehaveStall}, {Behave: BehaveHalf}, {Attempt: 3, Behave: BehaveCrash}},
	}}
	require.Equal(t, BehaveStall, s.entry(task.PhaseImplement, 1).Behave)
	require.Equal(t, BehaveHalf, s.entry(task.PhaseImplement, 2).Behave, "no entry for the attempt: the phase default")
	require.Equal(t, BehaveCrash, s.entry(task.PhaseImplement, 3).Behave)
	require.Equal(t, Entry{}, s.entry(task.PhasePlan, 1), "a phase absent from the script: built-in default")
	require.Equal(t, defaultPaceMS, s.pace())
}

func TestEntryArtifactText(t *testing.T) {
	t.Parallel()
	got, err := Entry{}.artifactText(task.PhasePlan)
	require.NoError(t, err)
	require.Equal(t, task.Example(task.PhasePlan), got)
	got, err = Entry{Artifact: []byte(`"{\"a\": 1}"`)}.artifactText(task.PhasePlan)
	require.NoError(t, err)
	require.Equal(t, `{"a": 1}`, got, "a JSON string holds the document")
	got, err = Entry{Artifact: []byte(`{"a": 1}`)}.artifactText(task.PhasePlan)
	require.NoError(t, err)
	require.Equal(t, `{"a": 1}`, got, "or the document is given inline")
	require.Error(t, task.ValidateArtifactBytes(task.PhasePlan, []byte(InvalidArtifact)))
}

func TestLoadScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "s.json")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	s, err := LoadScript(write(`{"pace_ms": 0, "record_dir": "rec", "phases": {"plan": [{"attempt": 1, "invalid_first": true}]}}`))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "rec"), s.RecordDir)
	require.Equal(t, 0, s.pace())
	require.True(t, s.entry(task.PhasePlan, 1).InvalidFirst)

	for body, want := range map[string]string{
		`{"phases": {"plan": [{"behave": "dance"}]}}`:                          `unknown behave "dance"`,
		`{"phases": {"dance": []}}`:                                            `unknown phase "dance"`,
		`{"phases": {"plan": [{"edits": [{"path": "../x", "content": ""}]}]}}`: "must be relative",
		`{"pace": 3}`: "unknown field",
	} {
		_, err := LoadScript(write(body))
		require.ErrorContains(t, err, want, body)
	}
}
