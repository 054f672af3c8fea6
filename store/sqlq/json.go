package sqlq

import (
	"encoding/json"
	"unicode/utf8"
)

// jsonText renders v for a JSON column.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// stringsJSON decodes a JSON array of strings, as jsonText wrote it, into
// dst: a scan of the plain form json.Marshal gives simple strings, and
// encoding/json for anything else (an escape, odd spacing, null). A store
// of thousands of tasks holds three such arrays per task, and reflection
// would cost more than the rest of reading them.
func stringsJSON[S ~[]E, E ~string](text string, dst *S) error {
	if len(text) < 2 || text[0] != '[' || text[len(text)-1] != ']' {
		return json.Unmarshal([]byte(text), dst)
	}
	body := text[1 : len(text)-1]
	out := S{}
	for body != "" {
		if body[0] != '"' {
			return json.Unmarshal([]byte(text), dst)
		}
		end := 1
		for end < len(body) && body[end] != '"' {
			if c := body[end]; c == '\\' || c < 0x20 {
				return json.Unmarshal([]byte(text), dst)
			}
			end++
		}
		if end == len(body) {
			return json.Unmarshal([]byte(text), dst)
		}
		s := body[1:end]
		if !utf8.ValidString(s) {
			return json.Unmarshal([]byte(text), dst)
		}
		out = append(out, E(s))
		body = body[end+1:]
		if body == "" {
			break
		}
		if body[0] != ',' || len(body) == 1 {
			return json.Unmarshal([]byte(text), dst)
		}
		body = body[1:]
	}
	*dst = out
	return nil
}
