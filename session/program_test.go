package session_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/session"
)

func TestProgramMissingNamesTheProgramAndWhatToInstall(t *testing.T) {
	claude := session.DefaultSpecs()["claude"]
	empty := []string{"PATH=" + t.TempDir()}
	require.Equal(t, `The program "claude" of harness claude is not on the PATH its sessions get on this machine; install it (npm install -g @anthropic-ai/claude-code).`,
		session.ProgramMissing(claude, empty, t.TempDir()))

	own := session.Spec{Name: "mine", Argv: []string{"/no/such/agent"}}
	require.Equal(t, "The program /no/such/agent of harness mine does not exist or is not executable on this machine; install it or put it on PATH.",
		session.ProgramMissing(own, empty, t.TempDir()))

	found := session.Spec{Name: "sh", Argv: []string{"sh"}, Env: []string{"PATH"}}
	require.Empty(t, session.ProgramMissing(found, []string{"PATH=/usr/bin:/bin"}, t.TempDir()))
	// What cannot be told before a launch is not called missing.
	require.Empty(t, session.ProgramMissing(session.Spec{Name: "rel", Argv: []string{"./agent.sh"}}, empty, t.TempDir()))
	require.Empty(t, session.ProgramMissing(session.Spec{Name: "self", Argv: []string{"{{self}}", "agent"}}, empty, t.TempDir()))
}
