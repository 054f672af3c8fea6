package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzDecodeTaskFile: any `add --file` content, TOML or JSON, decodes or
// is refused naming the file; never a panic.
func FuzzDecodeTaskFile(f *testing.F) {
	f.Add(true, []byte("title = \"T\"\ngoal = \"g\"\nverify = \"go test ./...\"\npipeline = [\"implement\"]\nacceptance = [\"a\"]\n"))
	f.Add(false, []byte(`{"goal": "g", "verify": "go test ./...", "harness": "shell", "capabilities": ["code"]}`))
	f.Add(true, []byte("bogus = 1\n"))
	f.Add(false, []byte(`{"goal": 5}`))
	f.Fuzz(func(t *testing.T, isTOML bool, data []byte) {
		name := "task.json"
		if isTOML {
			name = "task.toml"
		}
		var tf taskFile
		if err := decodeTaskFile(name, data, &tf); err != nil {
			require.Contains(t, err.Error(), name)
		}
	})
}
