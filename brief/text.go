package brief

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// maxListed caps how many paths one list shows, so a worktree with thousands
// of changed files does not crowd out the rest of the brief.
const maxListed = 50

// oneLine folds s onto one line: runs of whitespace, newlines included,
// become one space.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// prose normalises free text written by people (goal, rules, decisions):
// line endings become \n, trailing space goes, and markdown headings are
// pushed down to level four or deeper so that nothing inside a section can
// pass for one of the brief's own "## " or "### " headings.
func prose(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if t := strings.TrimLeft(l, " "); strings.HasPrefix(t, "#") {
			level := len(t) - len(strings.TrimLeft(t, "#"))
			if level < len(t) && t[level] == ' ' && level < 4 {
				l = strings.Repeat("#", 4-level) + t
			}
		}
		lines[i] = l
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// indentRest indents every line after the first by pad, so that multi-line
// text stays inside its list item.
func indentRest(s, pad string) string {
	return strings.ReplaceAll(s, "\n", "\n"+pad)
}

// bullets renders items as a markdown list, at most maxListed of them.
func bullets(items []string) string {
	var sb strings.Builder
	for i, it := range items {
		if i == maxListed {
			sb.WriteString("- … and " + strconv.Itoa(len(items)-maxListed) + " more\n")
			break
		}
		sb.WriteString("- " + indentRest(prose(it), "  ") + "\n")
	}
	return sb.String()
}

// labelledList renders "Label: none." or "Label:" followed by a list.
func labelledList(label string, items []string) string {
	if len(items) == 0 {
		return label + ": none.\n"
	}
	return label + ":\n" + bullets(items)
}

// fence wraps body in a code fence that no line of body can close: the fence
// is longer than any run of backticks in body.
func fence(lang, body string) string {
	longest, run := 0, 0
	for i := 0; i < len(body); i++ {
		if body[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + lang + "\n" + body + "\n" + f + "\n"
}

// prettyJSON indents JSON content for reading; content that is not JSON
// (it should not happen for a sealed artifact) is shown as it is.
func prettyJSON(data []byte) (string, string) {
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(data), "", "  "); err != nil {
		return "text", strings.TrimRight(string(data), "\n")
	}
	return "json", buf.String()
}

// screenText trims trailing spaces from each line and blank lines at both
// ends, which a terminal emulator's screen is padded with.
func screenText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}
