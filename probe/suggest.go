package probe

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Suggest returns a regular expression that matches every variant of a
// screen line seen changing while idle: runs of digits become \d+, a
// position where single characters differ (a spinner's frames) becomes a
// class of them, and the rest is matched literally. Variants that do not
// line up token for token get the first one with its digits generalised.
func Suggest(variants []string) string {
	toks := make([][]string, len(variants))
	for i, v := range variants {
		toks[i] = tokens(v)
	}
	same := true
	for _, t := range toks[1:] {
		if len(t) != len(toks[0]) {
			same = false
		}
	}
	if !same {
		var b strings.Builder
		for _, tok := range toks[0] {
			b.WriteString(literal(tok))
		}
		return b.String()
	}
	var b strings.Builder
	for i := range toks[0] {
		col := make([]string, len(toks))
		allDigits, allEqual, allRune := true, true, true
		for j, t := range toks {
			col[j] = t[i]
			allDigits = allDigits && isDigits(t[i])
			allEqual = allEqual && t[i] == toks[0][i]
			allRune = allRune && len([]rune(t[i])) == 1
		}
		switch {
		case allDigits:
			b.WriteString(`\d+`)
		case allEqual:
			b.WriteString(regexp.QuoteMeta(col[0]))
		case allRune:
			// In code point order, so the same characters give the
			// same class whichever was drawn first.
			b.WriteString("[")
			for _, c := range slices.Compact(slices.Sorted(slices.Values(col))) {
				b.WriteString(classChar(c))
			}
			b.WriteString("]")
		default:
			b.WriteString(`.+?`)
		}
	}
	return b.String()
}

// tokens splits s into runs of digits and single other characters.
func tokens(s string) []string {
	var out []string
	rs := []rune(s)
	for i := 0; i < len(rs); {
		if unicode.IsDigit(rs[i]) {
			j := i
			for j < len(rs) && unicode.IsDigit(rs[j]) {
				j++
			}
			out = append(out, string(rs[i:j]))
			i = j
			continue
		}
		out = append(out, string(rs[i]))
		i++
	}
	return out
}

func isDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

func literal(tok string) string {
	if isDigits(tok) {
		return `\d+`
	}
	return regexp.QuoteMeta(tok)
}

func classChar(c string) string {
	switch c {
	case `\`, `]`, `[`, `^`, `-`:
		return `\` + c
	}
	return c
}
