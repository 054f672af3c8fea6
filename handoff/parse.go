package handoff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// FieldError names the part of a handoff file that was refused and why.
// Field is a JSON path such as "task.verify" or "sessions[2].phase"; a
// problem with the file as a whole uses "(file)".
type FieldError struct {
	Field  string
	Reason string
}

// Error renders the field and the reason as "task.verify: missing".
func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// invalidError is what Parse returns: a *task.Refusal (reason
// handoff-invalid, detail the field error text) for the coordinator to record
// as a refusal event, and the *FieldError for a caller that wants the field.
// errors.As finds either.
type invalidError struct {
	refusal *task.Refusal
	field   *FieldError
}

func (e *invalidError) Error() string   { return e.refusal.Error() }
func (e *invalidError) Unwrap() []error { return []error{e.refusal, e.field} }

func invalid(field, format string, args ...any) error {
	fe := &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
	return &invalidError{refusal: &task.Refusal{Reason: task.ReasonHandoffInvalid, Detail: fe.Error()}, field: fe}
}

const fileField = "(file)"

// Parse decodes and validates a handoff file. It is strict: a file over
// MaxBytes, truncated or malformed JSON, trailing data, a version it does not
// know, anything the document's JSON Schema (schema.json) refuses (an unknown
// field, a value of the wrong type, a missing or blank required field), a
// digest that does not match, or a path of the exporting machine are each
// refused. On any error the Document is zero, so nothing half-checked
// can be used. The error unwraps (errors.As) to a *task.Refusal with reason
// task.ReasonHandoffInvalid and to a *FieldError naming the field.
func Parse(data []byte) (Document, error) {
	d, err := parse(data)
	if err != nil {
		return Document{}, err
	}
	return d, nil
}

func parse(data []byte) (Document, error) {
	if len(data) > MaxBytes {
		return Document{}, invalid(fileField, "is %d bytes; the cap is %d", len(data), MaxBytes)
	}
	top, err := decodeOne(data)
	if err != nil {
		return Document{}, err
	}
	obj, ok := top.(map[string]any)
	if !ok {
		return Document{}, invalid(fileField, "is not a JSON object")
	}
	// The version is read before anything else: a newer file may have fields
	// this build does not know, and "upgrade" is the useful answer then.
	if err := checkVersion(obj); err != nil {
		return Document{}, err
	}
	if fe := checkSchema(obj); fe != nil {
		return Document{}, invalid(fe.Field, "%s", fe.Reason)
	}
	var d Document
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		// The schema has seen every field, so this is a corner it does not
		// model (say, a number too large for an int).
		return Document{}, invalid(fileField, "%v", err)
	}
	d.normalize()
	if strings.TrimSpace(d.Digest) == "" {
		return Document{}, invalid("digest", "missing")
	}
	sum, err := d.canonicalDigest()
	if err != nil {
		return Document{}, invalid(fileField, "%v", err)
	}
	if sum != d.Digest {
		return Document{}, invalid("digest", "does not match the content: the file was edited by hand or damaged")
	}
	if fe := validate(d); fe != nil {
		return Document{}, invalid(fe.Field, "%s", fe.Reason)
	}
	return d, nil
}

// decodeOne reads exactly one JSON value from data and refuses anything
// after it.
func decodeOne(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.Is(err, io.EOF):
			return nil, invalid(fileField, "is empty")
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, invalid(fileField, "the JSON ends early: the file is truncated")
		case errors.As(err, &se):
			return nil, invalid(fileField, "not valid JSON at byte %d: %v", se.Offset, err)
		default:
			return nil, invalid(fileField, "not valid JSON: %v", err)
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, invalid(fileField, "trailing data after the document at byte %d", dec.InputOffset())
	}
	return v, nil
}

func checkVersion(obj map[string]any) error {
	raw, ok := obj["version"]
	if !ok || raw == nil {
		return invalid("version", "missing")
	}
	num, ok := raw.(json.Number)
	if !ok {
		return invalid("version", "must be a whole number")
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil {
		return invalid("version", "must be a whole number, got %s", num)
	}
	if n > Version {
		return invalid("version", "handoff version %d is newer than this orchestra-tui understands (%d); upgrade", n, Version)
	}
	if n < 1 {
		return invalid("version", "missing (got %d; the first version is 1)", n)
	}
	return nil
}
