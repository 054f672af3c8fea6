package fork

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/session"
)

// sessionLaunch builds a fingerprint by hand for tests of Diff.
func sessionLaunch(model string, tools []string) session.Launch {
	l := session.Launch{Binary: "/bin/claude", Version: "2.1.332", Model: model, AllowedTools: tools,
		Argv: append([]string{"claude", "-p", "--model", model, "--allowedTools"}, tools...), Dir: "/w"}
	sum := sha256.Sum256([]byte(strings.Join(l.Argv, " ")))
	l.Hash = hex.EncodeToString(sum[:])
	return l
}
