package github

import (
	"bytes"
	"io"
	"net/http"
	"sync"
)

// etagTransport makes GETs conditional: it keeps the last 200 answer of
// each URL with its ETag and sends If-None-Match; a 304 (which GitHub does
// not count against the rate limit) is answered from the kept copy. The
// poller reads the same few lists every few seconds, so most of its
// requests cost nothing. The cache is bounded by the URLs polled; entries
// are replaced, never accumulated per request.
type etagTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	kept map[string]etagEntry
}

type etagEntry struct {
	etag   string
	header http.Header
	body   []byte
}

// maxKept bounds the cache; past it the cache starts over, which costs one
// unconditional request per URL.
const maxKept = 512

// maxKeptBody is the largest answer kept: bigger ones are not cached.
const maxKeptBody = 4 << 20

func newETagTransport(next http.RoundTripper) *etagTransport {
	return &etagTransport{next: next, kept: map[string]etagEntry{}}
}

func (t *etagTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.Header.Get("If-None-Match") != "" {
		return t.next.RoundTrip(req)
	}
	// One client has one token, so the URL alone is the key.
	key := req.URL.String()
	t.mu.Lock()
	e, ok := t.kept[key]
	t.mu.Unlock()
	if ok {
		req = req.Clone(req.Context())
		req.Header.Set("If-None-Match", e.etag)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	switch {
	case ok && resp.StatusCode == http.StatusNotModified:
		_ = resp.Body.Close()
		out := *resp
		out.StatusCode, out.Status = http.StatusOK, "200 OK"
		out.Header = e.header.Clone()
		// The rate-limit headers of the 304 are the current ones.
		for k, v := range resp.Header {
			out.Header[k] = v
		}
		out.Body = io.NopCloser(bytes.NewReader(e.body))
		out.ContentLength = int64(len(e.body))
		return &out, nil
	case resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "":
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if len(body) <= maxKeptBody {
			t.mu.Lock()
			if len(t.kept) >= maxKept {
				t.kept = map[string]etagEntry{}
			}
			t.kept[key] = etagEntry{etag: resp.Header.Get("ETag"), header: resp.Header.Clone(), body: body}
			t.mu.Unlock()
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	return resp, nil
}
