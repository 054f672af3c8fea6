package session

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzReadCast: any file read as a recording is refused, or yields events
// whose times never go back and whose codes are the four asciicast v2 codes.
func FuzzReadCast(f *testing.F) {
	head := `{"version":2,"width":80,"height":24,"timestamp":1}` + "\n"
	f.Add(head + `[0.1, "o", "hello\r\n"]` + "\n" + `[0.2, "i", "x"]` + "\n" + `[0.3, "r", "100x30"]` + "\n" + `[0.4, "m", "cut"]` + "\n")
	f.Add(head)
	f.Add(head + `[0.5, "o", "a"]` + "\n" + `[0.1, "o", "b"]` + "\n")
	f.Add(`{"version":1}` + "\n")
	f.Fuzz(func(t *testing.T, doc string) {
		_, events, err := ReadCast(strings.NewReader(doc))
		if err != nil {
			return
		}
		last := 0.0
		for _, e := range events {
			require.GreaterOrEqual(t, e.Time, last)
			last = e.Time
			require.Contains(t, []string{"o", "i", "r", "m"}, e.Code)
		}
	})
}

// FuzzParseLaunch: a stored launch fingerprint reads back, or is refused;
// one that reads re-encodes to JSON that reads to the same fingerprint.
func FuzzParseLaunch(f *testing.F) {
	f.Add(`{"binary":"/usr/bin/claude","version":"2.1","argv":["claude","--model","m"],"dir":"/w","env_names":["PATH"],"cols":120,"rows":40}`)
	f.Add("")
	f.Add(`{"argv": 5}`)
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLaunch(s)
		if err != nil {
			return
		}
		again, err := ParseLaunch(l.JSON())
		require.NoError(t, err)
		require.True(t, bytes.Equal([]byte(l.JSON()), []byte(again.JSON())))
	})
}
