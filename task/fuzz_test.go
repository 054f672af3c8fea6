package task

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzValidateArtifact: any bytes as any phase's artifact are accepted or
// refused with a reason the operator has a sentence for; never a panic.
func FuzzValidateArtifact(f *testing.F) {
	for i, p := range Phases {
		f.Add(uint8(i), []byte(Example(p)))
	}
	f.Add(uint8(0), []byte(`{"summary": ""}`))
	f.Add(uint8(3), []byte(`{"summary": "s", "files": [1, 2]}`))
	f.Add(uint8(4), []byte("\xff\xfe not json"))
	f.Fuzz(func(t *testing.T, phase uint8, data []byte) {
		p := Phases[int(phase)%len(Phases)]
		err := ValidateArtifactBytes(p, data)
		if err == nil {
			return
		}
		var r *Refusal
		require.True(t, errors.As(err, &r), "not a refusal: %v", err)
		require.True(t, r.Reason.Known(), "reason %q has no sentence", r.Reason)
	})
}

// FuzzParsePipeline: an accepted pipeline is valid, and its phases joined
// by commas parse back to it.
func FuzzParsePipeline(f *testing.F) {
	f.Add("frame,research,plan,implement,review")
	f.Add("implement review")
	f.Add("plan,,implement")
	f.Add("review,implement")
	f.Add("IMPLEMENT")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePipeline(s)
		if err != nil {
			return
		}
		require.NoError(t, p.Validate())
		names := make([]string, len(p))
		for i, ph := range p {
			names[i] = string(ph)
		}
		again, err := ParsePipeline(strings.Join(names, ","))
		require.NoError(t, err, "%v", names)
		require.Equal(t, p, again)
	})
}
