package fork

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/session"
)

func TestPrintSpecMakesTheHarnessPrintJSON(t *testing.T) {
	t.Parallel()
	spec := session.DefaultSpecs()["claude"].Expand(map[string]string{"model": ""})
	got, err := PrintSpec(spec)
	require.NoError(t, err)
	require.Equal(t, []string{"claude", "-p", "--output-format", "json", "--allowedTools", "Bash", "Edit", "Write", "Read"}, got.Argv)
	require.Equal(t, spec.Env, got.Env)

	spec = session.DefaultSpecs()["claude"].Expand(map[string]string{"model": "m"})
	got, err = PrintSpec(spec)
	require.NoError(t, err)
	require.Equal(t, []string{"claude", "-p", "--output-format", "json", "--model", "m", "--allowedTools", "Bash", "Edit", "Write", "Read"}, got.Argv)

	_, err = PrintSpec(session.DefaultSpecs()["shell"])
	require.ErrorContains(t, err, `harness "shell" cannot train a base`)
}
