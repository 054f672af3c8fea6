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

// The webhook receiver: an address the operator chooses and a secret from
// a file or the environment, never unsigned; a bad address, a missing
// secret or both sources of it are refused when the file is read.
func TestSourceWebhook(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "hook.secret")
	require.NoError(t, os.WriteFile(p, []byte("whsec-123\n"), 0o600))
	c, err := Parse("o.toml", "[source]\nforge = \"gitea\"\nurl = \"http://127.0.0.1:3000\"\nrepo = \"a/b\"\n"+
		"webhook = \"127.0.0.1:8089\"\nwebhook_secret_file = \""+p+"\"\n")
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:8089", c.Source.Webhook)
	secret, err := c.Source.WebhookSecret()
	require.NoError(t, err)
	require.Equal(t, "whsec-123", secret)

	base := "[source]\nforge = \"gitea\"\nurl = \"http://127.0.0.1:3000\"\nrepo = \"a/b\"\n"
	_, err = Parse("o.toml", base+"webhook = \"8089\"\nwebhook_secret_env = \"X\"\n")
	require.ErrorContains(t, err, `source.webhook is "8089"; want host:port`)
	_, err = Parse("o.toml", base+"webhook = \":8089\"\n")
	require.ErrorContains(t, err, "source.webhook needs source.webhook_secret_file or source.webhook_secret_env")
	_, err = Parse("o.toml", base+"webhook = \":8089\"\nwebhook_secret_env = \"X\"\nwebhook_secret_file = \"y\"\n")
	require.ErrorContains(t, err, "both set; keep one")

	_, err = Source{WebhookSecretEnv: "ORCH_TEST_HOOK_SECRET_UNSET"}.WebhookSecret()
	require.ErrorContains(t, err, "ORCH_TEST_HOOK_SECRET_UNSET, which is not set")
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o600))
	_, err = Source{WebhookSecretFile: empty}.WebhookSecret()
	require.ErrorContains(t, err, "no secret")
}
