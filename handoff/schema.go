package handoff

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/message"
)

// schemaPrinter renders the library's own messages in English, for the
// keywords that carry no x-message.
var schemaPrinter = message.NewPrinter(message.MatchLanguage("en"))

// schemaJSON is the JSON Schema of a handoff file's shape: every field, its
// type, which are required, and the rules one value can be checked by alone
// (not blank, hex digits, a known phase). An "x-message" in a subschema is
// the reason the operator reads when a value breaks it.
//
//go:embed schema.json
var schemaJSON string

const schemaURL = "https://orchestra-tui.dev/schema/handoff-1.json"

var (
	schemaOnce sync.Once
	schemaDoc  any
	schema     *jsonschema.Schema
	schemaErr  error
)

func compiledSchema() (*jsonschema.Schema, any, error) {
	schemaOnce.Do(func() {
		schemaDoc, schemaErr = jsonschema.UnmarshalJSON(strings.NewReader(schemaJSON))
		if schemaErr != nil {
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if schemaErr = c.AddResource(schemaURL, schemaDoc); schemaErr != nil {
			return
		}
		schema, schemaErr = c.Compile(schemaURL)
	})
	return schema, schemaDoc, schemaErr
}

// checkSchema validates the decoded file against the schema and returns the
// first problem, naming its JSON path ("sessions[0].attempt"). Of several
// problems, one with the file's shape (an unknown field, a wrong type) comes
// before a value's, and then the first by path, so the answer is stable.
func checkSchema(v any) *FieldError {
	s, doc, err := compiledSchema()
	if err != nil {
		return &FieldError{fileField, fmt.Sprintf("the handoff schema of this build does not compile: %v", err)}
	}
	err = s.Validate(v)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return &FieldError{fileField, err.Error()}
	}
	var best *FieldError
	bestRank := 0
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		fe, rank := leafError(e, doc)
		if best == nil || rank < bestRank || rank == bestRank && fe.Field < best.Field {
			best, bestRank = fe, rank
		}
	}
	walk(ve)
	return best
}

// leafError turns one failed keyword into a FieldError and its rank: shape
// problems first, then missing fields, then values.
func leafError(e *jsonschema.ValidationError, doc any) (*FieldError, int) {
	field := fieldPath(e.InstanceLocation)
	sub := subschema(doc, e.SchemaURL)
	msg, _ := sub["x-message"].(string)
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		return &FieldError{joinField(field, slices.Min(k.Properties)), "unknown field"}, 0
	case *kind.Type:
		return &FieldError{orFile(field), typeReason(k.Want)}, 1
	case *kind.Format:
		if s, ok := k.Got.(string); ok {
			return &FieldError{orFile(field), fmt.Sprintf("%q is not an RFC 3339 time", s)}, 1
		}
		return &FieldError{orFile(field), "must be a time as RFC 3339 text"}, 1
	case *kind.Required:
		return &FieldError{joinField(field, slices.Min(k.Missing)), "missing"}, 2
	case *kind.Enum:
		noun, _ := sub["x-noun"].(string)
		if noun == "" {
			noun = "value"
		}
		known := make([]string, len(k.Want))
		for i, w := range k.Want {
			known[i] = fmt.Sprint(w)
		}
		return &FieldError{orFile(field), fmt.Sprintf("unknown %s %s (known: %s)", noun, quoted(k.Got), strings.Join(known, ", "))}, 4
	case *kind.Minimum:
		if msg == "" {
			msg = fmt.Sprintf("must be %s or more, got %s", ratString(k.Want), ratString(k.Got))
		}
		return &FieldError{orFile(field), msg}, 4
	}
	if msg == "" {
		msg = e.ErrorKind.LocalizedString(schemaPrinter)
	}
	// A pattern that says a value is blank outranks an enum on the same
	// field, so "" is "missing" rather than an unknown value.
	return &FieldError{orFile(field), msg}, 3
}

// fieldPath renders an instance location as the path the operator reads:
// object keys joined by dots, list indexes in brackets.
func fieldPath(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		if _, err := strconv.Atoi(tok); err == nil {
			b.WriteString("[" + tok + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func joinField(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func orFile(field string) string {
	if field == "" {
		return fileField
	}
	return field
}

// subschema finds the schema object at a validation error's location, to
// read its x-message and x-noun.
func subschema(doc any, loc string) map[string]any {
	_, frag, _ := strings.Cut(loc, "#")
	cur := doc
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if tok == "" {
			continue
		}
		tok, _ = url.PathUnescape(tok)
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	m, _ := cur.(map[string]any)
	return m
}

func typeReason(want []string) string {
	switch {
	case slices.Contains(want, "integer"):
		return "must be a whole number"
	case slices.Contains(want, "string"):
		return "must be a string"
	case slices.Contains(want, "array"):
		return "must be a list"
	case slices.Contains(want, "object"):
		return "must be an object"
	case slices.Contains(want, "boolean"):
		return "must be true or false"
	}
	return "must be " + strings.Join(want, " or ")
}

func quoted(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	return r.FloatString(3)
}
