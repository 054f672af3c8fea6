package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// lockedBuffer is a strings.Builder safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	sb strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.String()
}

func TestModelStubPrintsEnvAndServes(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	var stderr lockedBuffer
	code := make(chan int, 1)
	go func() {
		code <- serveModelStub(ctx, []string{"--home", home, "--workdir", t.TempDir()}, pw, &stderr)
		pw.Close()
	}()

	base := ""
	sc := bufio.NewScanner(pr)
	var out []string
	for sc.Scan() {
		line := sc.Text()
		out = append(out, line)
		if v, ok := strings.CutPrefix(line, "export ANTHROPIC_BASE_URL="); ok {
			base = strings.Trim(v, `"`)
		}
		if strings.HasPrefix(line, "# then:") {
			break
		}
	}
	text := strings.Join(out, "\n")
	require.True(t, strings.HasPrefix(base, "http://127.0.0.1:"), text)
	require.Contains(t, text, "export ANTHROPIC_API_KEY=")
	require.Contains(t, text, "export CLAUDE_CONFIG_DIR=")
	require.Contains(t, text, "export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=\"1\"")
	require.NotContains(t, text, "export PATH=")

	resp, err := http.Post(base+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, resp.Body.Close())

	cancel()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	require.Equal(t, 0, <-code)
	require.Contains(t, stderr.String(), "POST /v1/messages model=m")
	require.Contains(t, stderr.String(), "stopping after 1 requests")
}
