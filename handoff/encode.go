package handoff

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Seal normalises the document (times to UTC, empty lists to nil, a missing
// version to Version) and sets Digest to the sha256 of its canonical
// encoding: compact JSON of every field but Digest, in struct order. The
// canonical form is re-derived from the decoded values on Parse, so spacing
// does not matter but any change to a value does.
func (d *Document) Seal() error {
	if d.Version == 0 {
		d.Version = Version
	}
	d.normalize()
	sum, err := d.canonicalDigest()
	if err != nil {
		return err
	}
	d.Digest = sum
	return nil
}

// Marshal seals a copy of d and encodes it as indented JSON with a trailing
// newline. It then parses its own output, so a document this program writes
// is always one it will accept on resume; the error names the field that
// would be refused.
func Marshal(d Document) ([]byte, error) {
	c := clone(d)
	if err := c.Seal(); err != nil {
		return nil, fmt.Errorf("handoff: seal: %w", err)
	}
	out, err := encode(c, "  ")
	if err != nil {
		return nil, fmt.Errorf("handoff: encode: %w", err)
	}
	if _, err := Parse(out); err != nil {
		return nil, fmt.Errorf("handoff: the document would be refused on resume: %w", err)
	}
	return out, nil
}

// canonicalDigest returns the hex sha256 of the compact encoding of d with
// Digest cleared. d must already be normalised.
func (d Document) canonicalDigest() (string, error) {
	d.Digest = ""
	b, err := encode(d, "")
	if err != nil {
		return "", fmt.Errorf("canonical encoding: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// encode writes d as JSON without HTML escaping, so a verify command such as
// "go vet ./... && go test ./..." stays readable in the file.
func encode(d Document, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// normalize puts d in the one form that survives an encode/decode round trip:
// times in UTC without a monotonic reading, and empty lists as nil (the
// encoding omits both alike). It writes through d's slices, so callers that
// do not own them clone first.
func (d *Document) normalize() {
	d.ExportedAt = utc(d.ExportedAt)
	d.Task.Acceptance = nilIfEmpty(d.Task.Acceptance)
	d.Task.Capabilities = nilIfEmpty(d.Task.Capabilities)
	if len(d.Task.Pipeline) == 0 {
		d.Task.Pipeline = nil
	}
	d.Sessions = nilIfEmpty(d.Sessions)
	for i := range d.Sessions {
		d.Sessions[i].StartedAt = utc(d.Sessions[i].StartedAt)
		d.Sessions[i].EndedAt = utc(d.Sessions[i].EndedAt)
	}
	d.FilesChanged = nilIfEmpty(d.FilesChanged)
	d.Artifacts = nilIfEmpty(d.Artifacts)
	d.Decisions = nilIfEmpty(d.Decisions)
	for i := range d.Decisions {
		d.Decisions[i].At = utc(d.Decisions[i].At)
	}
	if c := d.Continuity; c != nil {
		c.FilesChanged = nilIfEmpty(c.FilesChanged)
		c.Artifacts = nilIfEmpty(c.Artifacts)
		c.Errors = nilIfEmpty(c.Errors)
	}
	d.DeadEnds = nilIfEmpty(d.DeadEnds)
	for i := range d.DeadEnds {
		d.DeadEnds[i].At = utc(d.DeadEnds[i].At)
	}
}

// clone copies every slice and pointer of d that normalize writes through,
// so Marshal leaves its argument untouched.
func clone(d Document) Document {
	d.Sessions = slices.Clone(d.Sessions)
	d.Decisions = slices.Clone(d.Decisions)
	d.DeadEnds = slices.Clone(d.DeadEnds)
	if d.Verdict != nil {
		v := *d.Verdict
		d.Verdict = &v
	}
	if d.Continuity != nil {
		c := *d.Continuity
		d.Continuity = &c
	}
	return d
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

func nilIfEmpty[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return s
}
