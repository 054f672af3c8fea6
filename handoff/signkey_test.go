package handoff_test

import "github.com/orchestra-tui/orchestra-tui/sign"

// testKey signs the tasks the tests resume, as an engine's fleet key would.
var testKey = sign.NewKey([]byte("handoff tests' fleet key, 32 bytes"))
