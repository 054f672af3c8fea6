package forge

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each forge's signature is checked from its own header: a good one
// passes; a missing, malformed or altered one, one made with another
// secret, one over another body, and any with no secret configured are
// refused. RFC 4231's test case 2 pins the HMAC itself.
func TestCheckSignature(t *testing.T) {
	body := []byte("what do ya want for nothing?")
	secret := []byte("Jefe")
	const rfc4231 = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
	require.Equal(t, "sha256="+rfc4231, Sign(GitHub, body, secret))
	require.Equal(t, rfc4231, Sign(Gitea, body, secret))
	require.Equal(t, rfc4231, Sign(Forgejo, body, secret))

	for _, kind := range []Kind{GitHub, Gitea, Forgejo} {
		t.Run(string(kind), func(t *testing.T) {
			signed := func(v string) http.Header {
				h := http.Header{}
				h.Set(SignatureHeader(kind), v)
				return h
			}
			good := Sign(kind, body, secret)
			require.NoError(t, CheckSignature(kind, signed(good), body, secret))

			refused := map[string]error{
				"missing":        CheckSignature(kind, http.Header{}, body, secret),
				"wrong secret":   CheckSignature(kind, signed(Sign(kind, body, []byte("Jeff"))), body, secret),
				"another body":   CheckSignature(kind, signed(good), append([]byte{}, "what do ya want for nothing!"...), secret),
				"not hex":        CheckSignature(kind, signed(good[:len(good)-1]+"z"), body, secret),
				"truncated":      CheckSignature(kind, signed(good[:len(good)-2]), body, secret),
				"empty":          CheckSignature(kind, signed(""), body, secret),
				"no secret":      CheckSignature(kind, signed(Sign(kind, body, nil)), body, nil),
				"another header": CheckSignature(kind, otherHeader(kind, good), body, secret),
			}
			if kind == GitHub {
				refused["no sha256= prefix"] = CheckSignature(kind, signed(rfc4231), body, secret)
				refused["sha1="] = CheckSignature(kind, signed("sha1="+rfc4231), body, secret)
			}
			for what, err := range refused {
				require.ErrorIs(t, err, ErrSignature, what)
			}
		})
	}

	// Forgejo: Gitea's header serves when its own is absent, never
	// rescues a bad one of its own.
	h := http.Header{}
	h.Set("X-Gitea-Signature", rfc4231)
	require.NoError(t, CheckSignature(Forgejo, h, body, secret))
	h.Set("X-Forgejo-Signature", Sign(Forgejo, body, []byte("other")))
	require.ErrorIs(t, CheckSignature(Forgejo, h, body, secret), ErrSignature)
	// Gitea does not read Forgejo's or GitHub's header.
	h = http.Header{}
	h.Set("X-Hub-Signature-256", "sha256="+rfc4231)
	h.Set("X-Forgejo-Signature", rfc4231)
	require.ErrorIs(t, CheckSignature(Gitea, h, body, secret), ErrSignature)
}

// otherHeader carries a good signature in a header kind does not read.
func otherHeader(kind Kind, sig string) http.Header {
	h := http.Header{}
	switch kind {
	case GitHub:
		h.Set("X-Gitea-Signature", sig)
	default:
		h.Set("X-Hub-Signature", sig)
	}
	return h
}

// The events of issues, comments and reviews name their issue or pull
// request, as each forge's payload carries it; others are not read.
func TestParseHook(t *testing.T) {
	event := func(kind Kind, name string) http.Header {
		h := http.Header{}
		h.Set(EventHeader(kind), name)
		return h
	}
	cases := []struct {
		kind  Kind
		event string
		body  string
		want  Hook
	}{
		{GitHub, "issues", `{"action":"opened","issue":{"number":5}}`, Hook{Event: "issues", Number: 5, Issue: true}},
		{GitHub, "issue_comment", `{"action":"created","issue":{"number":5},"comment":{"id":9}}`, Hook{Event: "issue_comment", Number: 5}},
		{GitHub, "pull_request_review", `{"action":"submitted","pull_request":{"number":7}}`, Hook{Event: "pull_request_review", Number: 7}},
		{GitHub, "pull_request_review_comment", `{"action":"created","pull_request":{"number":7}}`, Hook{Event: "pull_request_review_comment", Number: 7}},
		{Gitea, "issues", `{"action":"label_updated","number":3,"issue":{"number":3}}`, Hook{Event: "issues", Number: 3, Issue: true}},
		{Gitea, "issue_comment", `{"action":"created","issue":{"number":3},"is_pull":false}`, Hook{Event: "issue_comment", Number: 3}},
		{Gitea, "pull_request_comment", `{"action":"reviewed","number":4,"pull_request":{"number":4}}`, Hook{Event: "pull_request_comment", Number: 4}},
		{Gitea, "pull_request_rejected", `{"action":"reviewed","number":4,"pull_request":{"number":4}}`, Hook{Event: "pull_request_rejected", Number: 4}},
		{Forgejo, "issue_comment", `{"issue":{"number":8}}`, Hook{Event: "issue_comment", Number: 8}},
	}
	for _, c := range cases {
		got, ok, err := ParseHook(c.kind, event(c.kind, c.event), []byte(c.body))
		require.NoError(t, err, c.event)
		require.True(t, ok, c.event)
		require.Equal(t, c.want, got, "%s %s", c.kind, c.event)
	}
	for _, name := range []string{"push", "ping", "", "create"} {
		_, ok, err := ParseHook(GitHub, event(GitHub, name), []byte(`{"zen":"x"}`))
		require.NoError(t, err)
		require.False(t, ok, name)
	}
	// Forgejo's own event header, or Gitea's where it sends only that.
	h := http.Header{}
	h.Set("X-Gitea-Event", "issue_comment")
	got, ok, err := ParseHook(Forgejo, h, []byte(`{"issue":{"number":2}}`))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 2, got.Number)
	_, _, err = ParseHook(Gitea, event(Gitea, "issues"), []byte(`not json`))
	require.Error(t, err)
}
