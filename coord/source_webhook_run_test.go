package coord

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/forge"
	"github.com/orchestra-tui/orchestra-tui/forge/github/githubstub"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// An engine with [source] webhook listens there once its source runs,
// with the secret from webhook_secret_file: a delivery signed with it is
// taken, one signed otherwise refused.
func TestTheEngineServesSourceWebhook(t *testing.T) {
	t.Parallel()
	gh := githubstub.New(t, "team", "app")
	gh.Token = "ghp_webhook_run_token"
	dir := t.TempDir()
	tok, secretFile := filepath.Join(dir, "token"), filepath.Join(dir, "hook.secret")
	require.NoError(t, os.WriteFile(tok, []byte(gh.Token+"\n"), 0o600))
	require.NoError(t, os.WriteFile(secretFile, []byte("whsec-run-test\n"), 0o600))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // a free port for the engine to take
	gh.AddIssue("team", "Fix calc", project.Goal+"\n\n```verify\n"+project.VerifyCommand+"\n```\n", "orchestra", "harness:scripted")
	b := setup(t, fixedScript(), func(c *config.Config) {
		c.Source = config.Source{Forge: "github", URL: gh.URL, Repo: "team/app", Label: "orchestra", TokenFile: tok,
			Webhook: addr, WebhookSecretFile: secretFile}
	})
	// The source's first poll added the issue's task: it runs, and the
	// receiver was listening before it started.
	b.waitEvent(t, 30*time.Second, kindIs(task.EvTaskAdded))

	post := func(secret string) int {
		t.Helper()
		body := []byte(`{"action":"created","issue":{"number":1}}`)
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("X-GitHub-Event", "issue_comment")
		req.Header.Set("X-Hub-Signature-256", forge.Sign(forge.GitHub, body, []byte(secret)))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err, fmt.Sprintf("the engine listens on %s", addr))
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusAccepted, post("whsec-run-test"))
	require.Equal(t, http.StatusUnauthorized, post("whsec-other"))
}
