package coord

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzDecodeCommand: any bytes a peer sends on the control socket decode
// to a command or are refused; a decoded command re-encodes and decodes
// to itself. The decode reads through a size limit.
func FuzzDecodeCommand(f *testing.F) {
	f.Add([]byte(`{"Kind":"correct","TaskID":"01ABC","Text":"use the stdlib","Author":"ana"}`))
	f.Add([]byte(`{"Kind":"add","Task":{"Title":"t","Goal":"g"}}`))
	f.Add([]byte(`{"Kind":"resubmit","TaskID":"x"}` + "\n" + `{"Kind":"cancel"}`))
	f.Add([]byte(`{"Kind": 5}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var cmd Command
		if err := decodeCommand(bytes.NewReader(data), &cmd); err != nil {
			return
		}
		enc, err := json.Marshal(cmd)
		require.NoError(t, err)
		var again Command
		require.NoError(t, decodeCommand(bytes.NewReader(enc), &again))
		enc2, err := json.Marshal(again)
		require.NoError(t, err)
		require.JSONEq(t, string(enc), string(enc2))
	})
}
