package handoff

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// FuzzParse holds Parse to its promises on any input: it never panics, a
// refusal yields a zero Document and a handoff-invalid refusal, and an
// accepted document survives Marshal and Parse unchanged. CI runs only the
// seed corpus; run the fuzzer with
//
//	go test -fuzz FuzzParse -fuzztime 30s ./handoff
func FuzzParse(f *testing.F) {
	valid, err := Marshal(fullDocument())
	require.NoError(f, err)
	f.Add(valid)
	step := len(valid)/40 + 1
	for n := 0; n < len(valid); n += step {
		f.Add(valid[:n])
	}
	minimal := fullDocument()
	minimal.Sessions, minimal.Verdict, minimal.FilesChanged, minimal.Artifacts = nil, nil, nil, nil
	minimal.Decisions, minimal.Continuity, minimal.DeadEnds = nil, nil, nil
	small, err := Marshal(minimal)
	require.NoError(f, err)
	f.Add(small)

	f.Fuzz(func(t *testing.T, data []byte) {
		requireParseKeepsItsPromises(t, data)
		// Almost every mutation breaks the digest, which would leave the
		// field checks behind it unexplored; so also reseal whatever
		// decodes loosely and hold Parse to the same promises on that.
		var loose Document
		if json.Unmarshal(data, &loose) == nil && loose.Seal() == nil {
			if resealed, err := encode(loose, "  "); err == nil {
				requireParseKeepsItsPromises(t, resealed)
			}
		}
	})
}

func requireParseKeepsItsPromises(t *testing.T, data []byte) {
	d, err := Parse(data)
	if err != nil {
		require.Zero(t, d, "a refused file must yield nothing usable")
		var r *task.Refusal
		require.True(t, errors.As(err, &r), "not a refusal: %v", err)
		require.Equal(t, task.ReasonHandoffInvalid, r.Reason)
		var fe *FieldError
		require.True(t, errors.As(err, &fe), "no field named: %v", err)
		return
	}
	again, err := Marshal(d)
	require.NoError(t, err, "an accepted document must marshal")
	d2, err := Parse(again)
	require.NoError(t, err, "a re-marshalled document must parse")
	require.Equal(t, d, d2)
}
