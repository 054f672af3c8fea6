package gitea

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConditionalAnswersA304WithTheKeptBody: the second GET carries the
// first answer's ETag, the server says 304, and the caller still reads the
// body.
func TestConditionalAnswersA304WithTheKeptBody(t *testing.T) {
	var full, notModified atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		full.Add(1)
		w.Header().Set("ETag", `"v1"`)
		_, _ = io.WriteString(w, `[{"id":1}]`)
	}))
	defer srv.Close()
	c := &http.Client{Transport: newConditional(http.DefaultTransport)}
	for range 3 {
		resp, err := c.Get(srv.URL + "/api/v1/repos/o/r/issues/1/comments")
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, `[{"id":1}]`, string(b))
	}
	require.Equal(t, int32(1), full.Load())
	require.Equal(t, int32(2), notModified.Load())
}
