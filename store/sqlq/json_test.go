package sqlq

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// stringsJSON reads exactly what encoding/json reads, on the plain arrays
// it scans itself and on everything it hands over.
func FuzzStringsJSON(f *testing.F) {
	for _, s := range []string{`[]`, `null`, `["a"]`, `["frame","research","plan"]`, `["go test ./... passes 20 times"]`,
		`["a\"b"]`, `["\u003cb\u003e"]`, `[ "a" ]`, `["a",]`, `["a"`, `[,"a"]`, `["a""b"]`, `["é ✓"]`, "[\"\xff\"]",
		"[\"tab\there\"]", `[1]`, `{}`, ``, `["",""]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var want, got []string
		wantErr := json.Unmarshal([]byte(text), &want)
		gotErr := stringsJSON(text, &got)
		require.Equal(t, wantErr == nil, gotErr == nil, "error for %q: json %v, ours %v", text, wantErr, gotErr)
		if wantErr == nil {
			require.Equal(t, want, got, "decoding %q", text)
		}
	})
}

func TestStringsJSONTypedSlice(t *testing.T) {
	t.Parallel()
	var p task.Pipeline
	require.NoError(t, stringsJSON(`["plan","implement"]`, &p))
	require.Equal(t, task.Pipeline{task.PhasePlan, task.PhaseImplement}, p)
	var empty []string
	require.NoError(t, stringsJSON(`[]`, &empty))
	require.NotNil(t, empty, "an empty array is an empty slice, as encoding/json makes it")
	require.NoError(t, stringsJSON(`null`, &empty))
	require.Nil(t, empty)
}
