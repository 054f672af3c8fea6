package handoff

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// TestSchemaListsTheKnownValues keeps schema.json's enums in step with the
// Go constants they copy.
func TestSchemaListsTheKnownValues(t *testing.T) {
	t.Parallel()
	var s struct {
		Defs struct {
			Phase struct {
				AllOf []struct {
					Enum []task.Phase `json:"enum"`
				} `json:"allOf"`
			} `json:"phase"`
		} `json:"$defs"`
		Properties struct {
			Verdict struct {
				Properties struct {
					Status struct {
						Enum []verify.Status `json:"enum"`
					} `json:"status"`
				} `json:"properties"`
			} `json:"verdict"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal([]byte(schemaJSON), &s))
	var phases []task.Phase
	for _, a := range s.Defs.Phase.AllOf {
		phases = append(phases, a.Enum...)
	}
	require.Equal(t, task.Phases, phases)
	require.Equal(t, []verify.Status{verify.StatusOK, verify.StatusIncomplete, verify.StatusError}, s.Properties.Verdict.Properties.Status.Enum)
}

// TestSchemaNamesTheFieldOfEachRule covers the rules the schema holds that
// TestParseRefuses does not reach.
func TestSchemaNamesTheFieldOfEachRule(t *testing.T) {
	t.Parallel()
	valid, err := Marshal(fullDocument())
	require.NoError(t, err)
	base := func() map[string]any {
		v, err := decodeOne(valid)
		require.NoError(t, err)
		return v.(map[string]any)
	}
	cases := []struct {
		name   string
		mut    func(m map[string]any)
		field  string
		reason string
	}{
		{"exporter blank", func(m map[string]any) { m["exporter"] = " \u00a0" }, "exporter", "missing"},
		{"id with a newline", func(m map[string]any) { m["task"].(map[string]any)["id"] = "a\nb" }, "task.id", "control character"},
		{"empty acceptance", func(m map[string]any) { m["task"].(map[string]any)["acceptance"] = []any{"ok", ""} }, "task.acceptance[1]", "is empty"},
		{"no title", func(m map[string]any) { delete(m["task"].(map[string]any), "title") }, "task.title", "missing"},
		{"negative count", func(m map[string]any) { m["verdict"].(map[string]any)["failed"] = json.Number("-1") }, "verdict.failed", "0 or more, got -1"},
		{"sha256 in capitals", func(m map[string]any) {
			a := m["artifacts"].([]any)[0].(map[string]any)
			a["sha256"] = "AB" + a["sha256"].(string)[2:]
		}, "artifacts[0].sha256", "64 lowercase hex"},
		{"short branch head", func(m map[string]any) { m["repo"].(map[string]any)["branch_head"] = "abc" }, "repo.branch_head", "40"},
		{"a list where an object goes", func(m map[string]any) { m["repo"] = []any{} }, "repo", "must be an object"},
		{"unknown field first", func(m map[string]any) {
			delete(m, "exporter")
			m["zzz"] = true
		}, "zzz", "unknown field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := base()
			tc.mut(m)
			fe := checkSchema(m)
			require.NotNil(t, fe)
			require.Equal(t, tc.field, fe.Field, "reason: %s", fe.Reason)
			require.Contains(t, fe.Reason, tc.reason)
		})
	}
	require.Nil(t, checkSchema(base()))
}
