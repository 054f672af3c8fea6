package gitea

import (
	"bytes"
	"io"
	"net/http"
	"sync"
)

// maxCached bounds the conditional cache: the poller asks the same few
// URLs again and again, and a since= that moved makes a new one.
const maxCached = 256

// conditional is a RoundTripper that makes repeated GETs conditional: it
// keeps the last answer's ETag and Last-Modified per URL, sends them as
// If-None-Match / If-Modified-Since, and answers a 304 with the kept body.
// A forge that sends neither header is asked plainly each time.
type conditional struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen map[string]cached
}

type cached struct {
	etag, modified string
	header         http.Header
	body           []byte
}

func newConditional(next http.RoundTripper) *conditional {
	return &conditional{next: next, seen: map[string]cached{}}
}

func (c *conditional) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return c.next.RoundTrip(req)
	}
	key := req.URL.String()
	c.mu.Lock()
	prev, ok := c.seen[key]
	c.mu.Unlock()
	if ok {
		req = req.Clone(req.Context())
		if prev.etag != "" {
			req.Header.Set("If-None-Match", prev.etag)
		}
		if prev.modified != "" {
			req.Header.Set("If-Modified-Since", prev.modified)
		}
	}
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if ok && resp.StatusCode == http.StatusNotModified {
		_ = resp.Body.Close()
		resp.StatusCode, resp.Status = http.StatusOK, "200 OK (not modified)"
		resp.Header = prev.header.Clone()
		resp.Body = io.NopCloser(bytes.NewReader(prev.body))
		resp.ContentLength = int64(len(prev.body))
		return resp, nil
	}
	etag, modified := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if resp.StatusCode != http.StatusOK || (etag == "" && modified == "") {
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	c.mu.Lock()
	if len(c.seen) >= maxCached {
		for k := range c.seen {
			delete(c.seen, k)
			break
		}
	}
	c.seen[key] = cached{etag: etag, modified: modified, header: resp.Header.Clone(), body: body}
	c.mu.Unlock()
	return resp, nil
}
