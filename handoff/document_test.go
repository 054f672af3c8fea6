package handoff

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

const (
	rootSHA = "1111111111111111111111111111111111111111"
	baseSHA = "2222222222222222222222222222222222222222"
	headSHA = "3333333333333333333333333333333333333333"
)

// fullDocument returns a valid document with every field set, so a round
// trip that drops any field shows up as a difference.
func fullDocument() Document {
	at := time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)
	d := Document{
		Version:    Version,
		ExportedAt: at,
		Exporter:   "orchestra-tui v0.1.0",
		Task: TaskInfo{
			ID:           task.ID("01JQ0000000000000000000000"),
			Title:        "Fix Add",
			Goal:         "Make Add return the sum of its arguments.",
			Acceptance:   []string{"go test ./... passes", "Add(2, 3) == 5"},
			Verify:       "go vet ./... && go test ./...",
			Pipeline:     task.DefaultPipeline(),
			Harness:      "claude",
			Model:        "claude-sonnet-4-5-20250929",
			Capabilities: []string{"go", "network"},
		},
		PhaseReached: task.PhaseImplement,
		Sessions: []SessionInfo{
			{Phase: task.PhasePlan, Attempt: 1, Harness: "claude", Model: "claude-sonnet-4-5-20250929", Ended: "exited", StartedAt: at.Add(-time.Hour), EndedAt: at.Add(-50 * time.Minute),
				Usage: &SessionUsage{Tokens: task.Tokens{Input: 1000, Output: 20, CacheCreation: 300, CacheRead: 4000}, CostUSD: 0.0056, LowerBound: "side requests unrecorded"}},
			{Phase: task.PhaseImplement, Attempt: 2, Harness: "codex", Model: "gpt-5-codex", Ended: "lease expired", StartedAt: at.Add(-40 * time.Minute), EndedAt: at.Add(-time.Minute),
				Usage: &SessionUsage{Tokens: task.Tokens{Input: 5000, Output: 90, CacheCreation: 10, CacheRead: 7}, CostUSD: 0.02, LowerBound: "titles unrecorded"}},
		},
		Verdict:      &Verdict{Status: verify.StatusIncomplete, Line: "FAIL 1 of 4", Passed: 3, Failed: 1, Skipped: 2, Counted: true},
		FilesChanged: []string{"calc.go", "internal/calc/add_test.go"},
		Artifacts: []Artifact{
			NewArtifact(task.PhaseResearch, []byte(task.Example(task.PhaseResearch))),
			NewArtifact(task.PhasePlan, []byte("{\n  \"summary\": \"Fix <the> operator & test\",\n  \"steps\": [{\"title\": \"Return a+b\", \"files\": [\"calc.go\"]}]\n}\n")),
		},
		Decisions: []Decision{{ID: "01JQ0000000000000000000001", Text: "Do not touch the public API.", Author: "ana", At: at.Add(-30 * time.Minute)}},
		Continuity: &Continuity{
			Harness: "codex", Model: "gpt-5-codex", SessionID: "01JQ0000000000000000000002",
			Phase: task.PhaseImplement, Attempt: 2, Ended: "lease expired",
			Screen:       "$ go test ./...\n--- FAIL: TestAdd\n",
			FilesChanged: []string{"calc.go"},
			Artifacts:    []string{task.ArtifactPath(task.PhaseImplement)},
			Errors:       []string{"calc_test.go:12: got -1, want 5"},
			Verdict:      "incomplete: 3 passed, 1 failed",
		},
		DeadEnds: []DeadEnd{{Phase: task.PhaseImplement, Attempt: 1, Text: "Changing the test instead of the code.", At: at.Add(-45 * time.Minute)}},
		Repo: Identity{
			Origin: "https://example.com/acme/calc.git", RootCommit: rootSHA, BaseCommit: baseSHA,
			Branch: "orchestra/fix-add", BranchHead: headSHA,
		},
	}
	return d
}

// sealed returns the file bytes of d, sealed but without Marshal's own
// validation, so tests can build files that are well sealed yet invalid.
func sealed(t *testing.T, d Document) []byte {
	t.Helper()
	require.NoError(t, d.Seal())
	out, err := encode(d, "  ")
	require.NoError(t, err)
	return out
}

func TestRoundTripKeepsEveryField(t *testing.T) {
	t.Parallel()
	d := fullDocument()
	requireAllSet(t, reflect.ValueOf(d), "document")

	data, err := Marshal(d)
	require.NoError(t, err)
	got, err := Parse(data)
	require.NoError(t, err)

	want := fullDocument()
	require.NoError(t, want.Seal())
	require.Equal(t, want, got)
	require.Len(t, got.Digest, 64)
}

// requireAllSet fails on any zero field under v, so the fixture keeps up
// with fields added to the document.
func requireAllSet(t *testing.T, v reflect.Value, path string) {
	t.Helper()
	if v.Type() == reflect.TypeFor[time.Time]() {
		require.False(t, v.IsZero(), "%s is zero in the fixture", path)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		require.False(t, v.IsNil(), "%s is nil in the fixture", path)
		requireAllSet(t, v.Elem(), path)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Name == "Digest" {
				continue
			}
			requireAllSet(t, v.Field(i), path+"."+f.Name)
		}
	case reflect.Slice:
		require.NotZero(t, v.Len(), "%s is empty in the fixture", path)
		for i := range v.Len() {
			requireAllSet(t, v.Index(i), path)
		}
	default:
		require.False(t, v.IsZero(), "%s is zero in the fixture", path)
	}
}

func TestMarshalIsStableAndLeavesItsArgumentAlone(t *testing.T) {
	t.Parallel()
	d := fullDocument()
	local := time.FixedZone("CEST", 2*60*60)
	d.Sessions[0].StartedAt = d.Sessions[0].StartedAt.In(local)
	d.Digest = ""

	a, err := Marshal(d)
	require.NoError(t, err)
	b, err := Marshal(d)
	require.NoError(t, err)
	require.Equal(t, a, b)
	require.Equal(t, local, d.Sessions[0].StartedAt.Location(), "Marshal changed its argument")
	require.Empty(t, d.Digest)
	require.Contains(t, string(a), `"verify": "go vet ./... && go test ./..."`, "HTML escaping makes commands unreadable")
	require.True(t, bytes.HasSuffix(a, []byte("}\n")))
}

func TestMarshalRefusesWhatParseWould(t *testing.T) {
	t.Parallel()
	d := fullDocument()
	d.FilesChanged = []string{"/home/ana/calc/calc.go"}
	_, err := Marshal(d)
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "files_changed[0]", fe.Field)
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	valid, err := Marshal(fullDocument())
	require.NoError(t, err)
	edit := func(old, new string) []byte {
		require.Contains(t, string(valid), old)
		return []byte(strings.Replace(string(valid), old, new, 1))
	}
	doc := func(mut func(*Document)) []byte {
		d := fullDocument()
		mut(&d)
		return sealed(t, d)
	}
	cases := []struct {
		name   string
		data   []byte
		field  string
		reason string
	}{
		{"newer version", edit(`"version": 1,`, `"version": 2, "shiny_new_field": true,`), "version",
			"handoff version 2 is newer than this orchestra-tui understands (1); upgrade"},
		{"version zero", edit(`"version": 1,`, `"version": 0,`), "version", "missing"},
		{"version missing", edit(`"version": 1,`, ``), "version", "missing"},
		{"version not a number", edit(`"version": 1,`, `"version": "1",`), "version", "whole number"},
		{"empty", nil, "(file)", "empty"},
		{"truncated", valid[:len(valid)/2], "(file)", "truncated"},
		{"malformed", edit(`"goal":`, `"goal"`), "(file)", "not valid JSON"},
		{"trailing data", append(bytes.Clone(valid), "{}"...), "(file)", "trailing data"},
		{"not an object", []byte(`[1]`), "(file)", "not a JSON object"},
		{"unknown field", edit(`"goal":`, `"colour": "red", "goal":`), "task.colour", "unknown field"},
		{"key in the wrong case", edit(`"goal":`, `"Goal":`), "task.Goal", "unknown field"},
		{"wrong type", edit(`"attempt": 1,`, `"attempt": "one",`), "sessions[0].attempt", "whole number"},
		{"null for a string", edit(`"title": "Fix Add"`, `"title": null`), "task.title", "must be a string"},
		{"bad time", edit(`"exported_at": "2026`, `"exported_at": "yesterday 2026`), "exported_at", "RFC 3339"},
		{"hand-edited goal", edit("Make Add return", "Make Add reTurn"), "digest",
			"does not match the content: the file was edited by hand or damaged"},
		{"digest missing", withoutDigest(t, valid), "digest", "missing"},
		{"too large", append(bytes.Clone(valid), bytes.Repeat([]byte(" "), MaxBytes)...), "(file)", "cap"},
		{"no goal", doc(func(d *Document) { d.Task.Goal = " " }), "task.goal", "missing"},
		{"no verify", doc(func(d *Document) { d.Task.Verify = "" }), "task.verify", "missing"},
		{"bad pipeline", doc(func(d *Document) { d.Task.Pipeline = task.Pipeline{"plan", "frame"} }), "task.pipeline", "out of order"},
		{"phase outside pipeline", doc(func(d *Document) {
			d.Task.Pipeline = task.Pipeline{task.PhaseResearch, task.PhasePlan}
			d.PhaseReached = task.PhaseReview
		}), "phase_reached", "not in the task's pipeline"},
		{"unknown phase", doc(func(d *Document) { d.Sessions[1].Phase = "deploy" }), "sessions[1].phase", "unknown phase"},
		{"short root commit", doc(func(d *Document) { d.Repo.RootCommit = "abc123" }), "repo.root_commit", "40"},
		{"missing base commit", doc(func(d *Document) { d.Repo.BaseCommit = "" }), "repo.base_commit", "40"},
		{"artifact hash", doc(func(d *Document) { d.Artifacts[0].SHA256 = strings.Repeat("0", 64) }), "artifacts[0].sha256", "does not match"},
		{"artifact schema", doc(func(d *Document) { d.Artifacts[1] = NewArtifact(task.PhasePlan, []byte(`{"summary": "x"}`)) }), "artifacts[1].content", "plan.json"},
		{"artifact phase", doc(func(d *Document) { d.Artifacts[1].Phase = "deploy" }), "artifacts[1].phase", "unknown phase"},
		{"absolute path", doc(func(d *Document) { d.FilesChanged[1] = "/srv/work/calc.go" }), "files_changed[1]", "absolute path"},
		{"home path", doc(func(d *Document) { d.FilesChanged[0] = "wt/home/ana/x/home/ana/calc.go" }), "files_changed[0]", "absolute path"},
		{"drive letter", doc(func(d *Document) { d.FilesChanged[0] = `C:\work\calc.go` }), "files_changed[0]", "absolute path"},
		{"climbing path", doc(func(d *Document) { d.FilesChanged[0] = "../other/calc.go" }), "files_changed[0]", "inside the repository"},
		{"continuity path", doc(func(d *Document) { d.Continuity.FilesChanged = []string{"/tmp/wt/calc.go"} }), "continuity.files_changed[0]", "absolute path"},
		{"continuity artifact path", doc(func(d *Document) { d.Continuity.Artifacts = []string{"/Users/ana/wt/.orchestra/plan.json"} }), "continuity.artifacts[0]", "absolute path"},
		{"path inside an artifact", doc(func(d *Document) {
			d.Artifacts[1] = NewArtifact(task.PhasePlan, []byte(`{"summary": "s", "steps": [{"title": "t", "files": ["/home/ana/wt/calc.go"]}]}`))
		}), "artifacts[1].content.steps[0].files[0]", "absolute path"},
		{"origin with a token", doc(func(d *Document) { d.Repo.Origin = "https://ghp_secret@example.com/acme/calc.git" }), "repo.origin", "credentials"},
		{"branch with a space", doc(func(d *Document) { d.Repo.Branch = "main; rm -rf" }), "repo.branch", "not a valid branch name"},
		{"verdict status", doc(func(d *Document) { d.Verdict.Status = "green" }), "verdict.status", "unknown status"},
		{"session attempt", doc(func(d *Document) { d.Sessions[0].Attempt = 0 }), "sessions[0].attempt", "1 or more"},
		{"decision text", doc(func(d *Document) { d.Decisions[0].Text = "" }), "decisions[0].text", "missing"},
		{"dead end phase", doc(func(d *Document) { d.DeadEnds[0].Phase = "" }), "dead_ends[0].phase", "missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tc.data)
			require.Error(t, err)
			require.Zero(t, got, "a refused file must yield nothing usable")

			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tc.field, fe.Field, "error: %v", err)
			require.Contains(t, fe.Reason, tc.reason)

			var r *task.Refusal
			require.ErrorAs(t, err, &r)
			require.Equal(t, task.ReasonHandoffInvalid, r.Reason)
			require.Equal(t, fe.Error(), r.Detail)
			require.Equal(t, "handoff.json: "+tc.field+": "+fe.Reason, "handoff.json: "+fe.Error())
		})
	}
}

func TestParseAcceptsSpacingChanges(t *testing.T) {
	t.Parallel()
	data, err := Marshal(fullDocument())
	require.NoError(t, err)
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, data))
	a, err := Parse(data)
	require.NoError(t, err)
	b, err := Parse(compact.Bytes())
	require.NoError(t, err)
	require.Equal(t, a, b)
}

func TestSealNormalisesTimesAndVersion(t *testing.T) {
	t.Parallel()
	d := fullDocument()
	d.Version = 0
	d.ExportedAt = d.ExportedAt.In(time.FixedZone("X", -5*60*60))
	d.Sessions = append(d.Sessions[:0:0], d.Sessions...)
	require.NoError(t, d.Seal())
	require.Equal(t, Version, d.Version)
	require.Equal(t, time.UTC, d.ExportedAt.Location())
}

// withoutDigest returns data with its digest value blanked.
func withoutDigest(t *testing.T, data []byte) []byte {
	t.Helper()
	d, err := Parse(data)
	require.NoError(t, err)
	out := strings.Replace(string(data), `"digest": "`+d.Digest+`"`, `"digest": ""`, 1)
	require.NotEqual(t, string(data), out)
	return []byte(out)
}
