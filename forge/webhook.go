package forge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// A forge that can reach the engine announces issues, comments and reviews
// with a webhook delivery: a POST of the event's JSON, signed with
// HMAC-SHA256 of the raw body under the secret the operator gave the forge
// and the engine. CheckSignature and ParseHook read one; the engine only
// takes it as a prompt to read the forge at once (the poll stays what
// decides), so a delivery's content is never trusted beyond its number.

// ErrSignature is returned (wrapped) for a delivery whose signature is
// missing or does not match.
var ErrSignature = errors.New("webhook signature missing or wrong")

// SignatureHeader is the header kind's deliveries carry their signature
// in: GitHub's X-Hub-Signature-256 ("sha256=" and the hex HMAC), Gitea's
// X-Gitea-Signature and Forgejo's X-Forgejo-Signature (bare hex).
func SignatureHeader(kind Kind) string {
	switch kind {
	case GitHub:
		return "X-Hub-Signature-256"
	case Forgejo:
		return "X-Forgejo-Signature"
	}
	return "X-Gitea-Signature"
}

// Sign is the signature header's value a forge of kind sends for body.
func Sign(kind Kind, body, secret []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	sum := hex.EncodeToString(m.Sum(nil))
	if kind == GitHub {
		return "sha256=" + sum
	}
	return sum
}

// CheckSignature checks that h carries kind's signature of body under
// secret, comparing in constant time. An empty secret matches nothing. A
// Forgejo that sends only Gitea's header (as older ones do) is checked by
// that; when X-Forgejo-Signature is present it is the one checked.
func CheckSignature(kind Kind, h http.Header, body, secret []byte) error {
	if len(secret) == 0 {
		return fmt.Errorf("%w: no secret configured", ErrSignature)
	}
	name := SignatureHeader(kind)
	got := h.Get(name)
	if got == "" && kind == Forgejo {
		name = SignatureHeader(Gitea)
		got = h.Get(name)
	}
	if got == "" {
		return fmt.Errorf("%w: no %s", ErrSignature, name)
	}
	if kind == GitHub {
		hexSum, ok := strings.CutPrefix(got, "sha256=")
		if !ok {
			return fmt.Errorf("%w: %s is not sha256=<hex>", ErrSignature, name)
		}
		got = hexSum
	}
	sig, err := hex.DecodeString(strings.TrimSpace(got))
	if err != nil {
		return fmt.Errorf("%w: %s is not hex", ErrSignature, name)
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	if !hmac.Equal(sig, m.Sum(nil)) {
		return fmt.Errorf("%w: %s does not match", ErrSignature, name)
	}
	return nil
}

// Hook is what a verified delivery names.
type Hook struct {
	// Event is the forge's event name (its X-GitHub-Event, X-Gitea-Event
	// or X-Forgejo-Event header).
	Event string
	// Number is the issue's or pull request's number, 0 when the payload
	// names none.
	Number int
	// Issue is set for an issue's own events (opened, edited, labelled,
	// closed): the labelled issues are listed again.
	Issue bool
}

// EventHeader is the header naming a delivery's event for kind.
func EventHeader(kind Kind) string {
	switch kind {
	case GitHub:
		return "X-GitHub-Event"
	case Forgejo:
		return "X-Forgejo-Event"
	}
	return "X-Gitea-Event"
}

// hookEvents are the events that concern the engine, by forge: issues,
// issue (and pull request conversation) comments, pull request reviews and
// their line comments. Gitea names a review by its verdict, in its event
// header (pull_request_approved, …) and in its event type header
// (pull_request_review_approved, …); both are here.
var hookEvents = map[string]bool{
	"issues": true, "issue_comment": true,
	// GitHub
	"pull_request_review": true, "pull_request_review_comment": true,
	// Gitea and Forgejo
	"pull_request_approved": true, "pull_request_rejected": true, "pull_request_comment": true,
	"pull_request_review_approved": true, "pull_request_review_rejected": true,
}

// ParseHook reads a verified delivery: ok is false for an event the
// engine does not read (a push, GitHub's ping), which the receiver
// answers and drops. A payload that is not the JSON of an event is an
// error.
func ParseHook(kind Kind, h http.Header, body []byte) (hook Hook, ok bool, err error) {
	event := h.Get(EventHeader(kind))
	if event == "" && kind == Forgejo {
		event = h.Get(EventHeader(Gitea))
	}
	if !hookEvents[event] {
		return Hook{Event: event}, false, nil
	}
	var p struct {
		Number int `json:"number"`
		Issue  *struct {
			Number int `json:"number"`
		} `json:"issue"`
		PullRequest *struct {
			Number int `json:"number"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return Hook{Event: event}, false, fmt.Errorf("webhook %s: %w", event, err)
	}
	hook = Hook{Event: event, Number: p.Number, Issue: event == "issues"}
	switch {
	case p.Issue != nil && p.Issue.Number > 0:
		hook.Number = p.Issue.Number
	case p.PullRequest != nil && p.PullRequest.Number > 0:
		hook.Number = p.PullRequest.Number
	}
	return hook, true, nil
}
