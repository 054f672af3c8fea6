package handoff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

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
// MaxBytes, truncated or malformed JSON, trailing data, an unknown field, a
// value of the wrong type, a version it does not know, a digest that does
// not match, a missing required field or a path of the exporting machine are
// each refused. On any error the Document is zero, so nothing half-checked
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
	if fe := checkShape(obj, reflect.TypeFor[Document](), ""); fe != nil {
		return Document{}, invalid(fe.Field, "%s", fe.Reason)
	}
	var d Document
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		// checkShape has seen every field, so this is a corner it does not
		// model (say, a time offset out of range).
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

// checkShape walks the decoded JSON beside the Go type it must fill and
// names the first field that is unknown (keys must match exactly; the
// decoder alone would accept "Goal" for "goal"), null where a value is
// required, or of the wrong type. encoding/json reports only the key of an
// unknown field; this reports its whole path.
func checkShape(v any, t reflect.Type, path string) *FieldError {
	at := path
	if at == "" {
		at = fileField
	}
	if t == reflect.TypeFor[time.Time]() {
		s, ok := v.(string)
		if !ok {
			return &FieldError{at, "must be a time as RFC 3339 text"}
		}
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return &FieldError{at, fmt.Sprintf("%q is not an RFC 3339 time", s)}
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v == nil {
			return nil
		}
		return checkShape(v, t.Elem(), path)
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return &FieldError{at, "must be an object"}
		}
		fields := jsonFields(t)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			ft, ok := fields[k]
			if !ok {
				return &FieldError{sub, "unknown field"}
			}
			if fe := checkShape(m[k], ft, sub); fe != nil {
				return fe
			}
		}
	case reflect.Slice:
		if v == nil {
			return nil
		}
		a, ok := v.([]any)
		if !ok {
			return &FieldError{at, "must be a list"}
		}
		for i, e := range a {
			if fe := checkShape(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); fe != nil {
				return fe
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return &FieldError{at, "must be a string"}
		}
	case reflect.Int:
		n, ok := v.(json.Number)
		if !ok {
			return &FieldError{at, "must be a whole number"}
		}
		if _, err := strconv.ParseInt(string(n), 10, 64); err != nil {
			return &FieldError{at, fmt.Sprintf("must be a whole number, got %s", n)}
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return &FieldError{at, "must be true or false"}
		}
	default:
		return &FieldError{at, fmt.Sprintf("has a type this build cannot check (%s)", t)}
	}
	return nil
}

// jsonFields maps the JSON names of t's exported fields to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type, t.NumField())
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
