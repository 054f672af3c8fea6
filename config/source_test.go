package config

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSourceSectionAsIssue27ShowsIt(t *testing.T) {
	t.Parallel()
	c, err := Parse("orchestra.toml", `
[finalise]
pr = true
[source]
forge = "github"
repo = "team/app"
label = "orchestra"
users = ["alice", "bob"]
token_env = "ORCH_TEST_TOKEN_UNSET"
`)
	require.NoError(t, err)
	require.True(t, c.Finalise.PR)
	require.Equal(t, Source{Forge: "github", Repo: "team/app", Label: "orchestra", Users: []string{"alice", "bob"}, TokenEnv: "ORCH_TEST_TOKEN_UNSET"}, c.Source)
	_, err = c.Source.Token(context.Background())
	require.ErrorContains(t, err, "ORCH_TEST_TOKEN_UNSET, which is not set")
}

func TestSourceErrors(t *testing.T) {
	t.Parallel()
	_, err := Parse("o.toml", "[finalise]\npr = true\n")
	require.ErrorContains(t, err, "finalise.pr opens pull requests on the [source] forge")
	_, err = Parse("o.toml", "[source]\nforge = \"gitlab\"\nrepo = \"app\"\n")
	require.ErrorContains(t, err, `source.forge is "gitlab"`)
	require.ErrorContains(t, err, "owner/name")
	_, err = Parse("o.toml", "[source]\nforge = \"gitea\"\nrepo = \"a/b\"\n")
	require.ErrorContains(t, err, "source.url is needed for gitea")
}

func TestSourceTokenFromFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "tok")
	require.NoError(t, os.WriteFile(p, []byte("s3cret\n"), 0o600))
	tok, err := Source{Forge: "gitea", TokenFile: p}.Token(context.Background())
	require.NoError(t, err)
	require.Equal(t, "s3cret", tok)
}
