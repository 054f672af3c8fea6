package wire

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

type fastT struct {
	S     string   `json:"s"`
	N     int      `json:"n,omitempty"`
	U     uint64   `json:"u,omitempty"`
	B     bool     `json:"b,omitempty"`
	L     []string `json:"l,omitempty"`
	Other any      `json:"other,omitempty"`
}

func appendFast(b []byte, v fastT) []byte {
	b = append(b, '{')
	b = AppendString(AppendKey(b, "s"), v.S)
	b = AppendInt(b, "n", v.N)
	b = AppendUint(b, "u", v.U)
	b = AppendTrue(b, "b", v.B)
	if len(v.L) > 0 {
		b = append(AppendKey(b, "l"), '[')
		for i, s := range v.L {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, s)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func readFast(b []byte) (fastT, bool) {
	var v fastT
	d := NewDec(b)
	d.Object(func(k []byte) {
		switch string(k) {
		case "s":
			v.S = d.String()
		case "n":
			v.N = d.Int()
		case "u":
			v.U = d.Uint()
		case "b":
			v.B = d.Bool()
		case "l":
			d.Array(func() { v.L = append(v.L, d.String()) })
		default:
			d.Skip()
		}
	})
	return v, !d.Bad()
}

var fastStrings = []string{
	"", "plain", "\x1b[32m✓\x1b[m 変更 \"quoted\" back\\slash", "tab\tnl\ncr\r\x00\x07\x7f",
	"<html>&amp;", "emoji 👩‍💻 and \u2028 \u2029", "invalid \xff\xfe utf-8 \xe2\x82", "/slash/",
}

// What the fast writer writes encoding/json reads as the same values, and
// what encoding/json writes the fast reader reads as encoding/json does.
func TestTheFastCodecAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range fastStrings {
		v := fastT{S: s, N: -42, U: 1 << 40, B: true, L: []string{s, "x", s + s}}
		fast := appendFast(nil, v)
		var viaJSON fastT
		require.NoError(t, json.Unmarshal(fast, &viaJSON), "%s", fast)
		std, err := json.Marshal(v)
		require.NoError(t, err)
		var want fastT
		require.NoError(t, json.Unmarshal(std, &want))
		require.Equal(t, want, viaJSON, "encoding/json reads the fast writing of %q", s)

		for _, b := range [][]byte{fast, std} {
			got, ok := readFast(b)
			require.True(t, ok, "%s", b)
			require.Equal(t, want, got, "the fast reader reads %s", b)
		}
	}
	// Escapes encoding/json never writes but reads: the reader too.
	got, ok := readFast([]byte(` { "s" : "\u00e9\/\b\f\ud83d\ude00\ud800x" , "other": {"a":[1,-2.5e3,null,true,"z"]}, "n":0 } `))
	require.True(t, ok)
	var want fastT
	require.NoError(t, json.Unmarshal([]byte(`{"s":"\u00e9\/\b\f\ud83d\ude00\ud800x"}`), &want))
	require.Equal(t, want.S, got.S)
	// What it does not expect, it says so.
	for _, bad := range []string{`{"s":1}`, `{"s":"x"`, `{"s":"x"} trailing`, `{"s":"a` + "\x01" + `"}`, `{"n":"1"}`, `[1]`, `{"s":"\q"}`, `{"s\"":"x"}`} {
		_, ok := readFast([]byte(bad))
		require.False(t, ok, "%s", bad)
	}
}
