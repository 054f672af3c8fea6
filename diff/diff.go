// Package diff holds what the console's Diff tab shows of a task's change:
// the files it touched with their counts and hunks, each changed line with
// its word-level changes marked. The engine reads git's patch (package
// repo runs git) and parses it here; the console only renders the result,
// so it travels over the engine protocol as plain data.
package diff

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Scope says what a diff compares.
type Scope string

// The scopes of the Diff tab's toggle.
const (
	// ScopeBranch is the task's branch against its merge base with the
	// branch it lands on.
	ScopeBranch Scope = "branch"
	// ScopeSession is what one session changed: the branch where it
	// stood when the session started against where it stood when the next
	// one did (or now).
	ScopeSession Scope = "session"
)

// Limits of what one diff carries: a file with more changed lines than
// MaxFileLines, or a patch past MaxPatchBytes, is named with its counts and
// not dumped, so a generated file or a vendored tree cannot flood the
// console or the wire.
const (
	MaxFileLines  = 3000
	MaxPatchBytes = 4 << 20
)

// Result is one diff as the Diff tab shows it.
type Result struct {
	Scope Scope `json:"scope"`
	// Base names what the change is compared against, for the header:
	// "main @ 1a2b3c4" or "session 01J…'s start @ 1a2b3c4".
	Base string `json:"base"`
	// Head names the compared side: "feature @ 5d6e7f8" or "worktree".
	Head string `json:"head"`
	// Session is the session the diff is narrowed to (ScopeSession).
	Session string `json:"session,omitempty"`
	// Note says why the diff is empty or partial, for the operator.
	Note  string `json:"note,omitempty"`
	Files []File `json:"files"`
}

// Added and Removed count the changed lines of every file.
func (r Result) Added() (n int) {
	for _, f := range r.Files {
		n += f.Added
	}
	return n
}

// Removed counts the removed lines of every file.
func (r Result) Removed() (n int) {
	for _, f := range r.Files {
		n += f.Removed
	}
	return n
}

// File is one file of a diff.
type File struct {
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"` // set for a rename or copy
	// Status is "added", "deleted", "renamed" or "modified".
	Status  string `json:"status"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	// Binary files and files too large to show are named, not dumped.
	Binary   bool   `json:"binary,omitempty"`
	TooLarge bool   `json:"too_large,omitempty"`
	Hunks    []Hunk `json:"hunks,omitempty"`
}

// Hunk is one run of changed lines with their context.
type Hunk struct {
	OldStart int    `json:"old_start"`
	OldLines int    `json:"old_lines"`
	NewStart int    `json:"new_start"`
	NewLines int    `json:"new_lines"`
	Section  string `json:"section,omitempty"` // the function git names after @@
	Lines    []Line `json:"lines"`
}

// Header is the hunk's @@ line as git writes it.
func (h Hunk) Header() string {
	s := "@@ -" + strconv.Itoa(h.OldStart) + "," + strconv.Itoa(h.OldLines) +
		" +" + strconv.Itoa(h.NewStart) + "," + strconv.Itoa(h.NewLines) + " @@"
	if h.Section != "" {
		s += " " + h.Section
	}
	return s
}

// Text is the hunk as patch text: the anchor a comment keeps, so a later
// diff can tell whether the lines it was made on changed since.
func (h Hunk) Text() string {
	var b strings.Builder
	for _, l := range h.Lines {
		b.WriteByte(byte(l.Kind))
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	return b.String()
}

// Kind is what a line of a hunk is.
type Kind byte

// Line kinds, as the patch marks them.
const (
	Context Kind = ' '
	Add     Kind = '+'
	Del     Kind = '-'
)

// Line is one line of a hunk.
type Line struct {
	Kind Kind   `json:"kind"`
	Text string `json:"text"`
	// Old and New are the line's numbers in the old and new file; zero on
	// the side it is not on.
	Old int `json:"old,omitempty"`
	New int `json:"new,omitempty"`
	// Marks are the byte ranges of Text that changed against the line it
	// replaced: the words to mark inside a changed line.
	Marks []Span `json:"marks,omitempty"`
}

// Span is a byte range [Start, End) of a line.
type Span struct {
	Start int `json:"s"`
	End   int `json:"e"`
}

// Parse reads git's unified patch (git diff with a/ b/ prefixes) into
// files, marking word-level changes in each run of replaced lines.
func Parse(patch []byte) []File {
	var files []File
	var f *File
	var h *Hunk
	oldN, newN := 0, 0
	flush := func() {
		if f == nil {
			return
		}
		if f.Added+f.Removed > MaxFileLines {
			f.TooLarge, f.Hunks = true, nil
		}
		for i := range f.Hunks {
			markWords(f.Hunks[i].Lines)
		}
		files = append(files, *f)
		f, h = nil, nil
	}
	for _, line := range strings.SplitAfter(string(patch), "\n") {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "diff --git "):
			flush()
			f = &File{Status: "modified"}
			f.OldPath, f.Path = gitPaths(strings.TrimPrefix(line, "diff --git "))
		case f == nil:
			continue
		case h != nil && len(line) > 0 && (line[0] == ' ' || line[0] == '+' || line[0] == '-'):
			l := Line{Kind: Kind(line[0]), Text: line[1:]}
			switch l.Kind {
			case Context:
				l.Old, l.New = oldN, newN
				oldN++
				newN++
			case Add:
				l.New = newN
				newN++
				f.Added++
			case Del:
				l.Old = oldN
				oldN++
				f.Removed++
			}
			if f.Added+f.Removed <= MaxFileLines {
				h.Lines = append(h.Lines, l)
			}
		case strings.HasPrefix(line, "@@ "):
			hk, ok := parseHunkHeader(line)
			if !ok {
				continue
			}
			f.Hunks = append(f.Hunks, hk)
			h = &f.Hunks[len(f.Hunks)-1]
			oldN, newN = hk.OldStart, hk.NewStart
		case h != nil:
			// "\ No newline at end of file" and the like.
			continue
		case strings.HasPrefix(line, "new file mode"):
			f.Status = "added"
		case strings.HasPrefix(line, "deleted file mode"):
			f.Status = "deleted"
		case strings.HasPrefix(line, "rename from "):
			f.Status, f.OldPath = "renamed", unquote(strings.TrimPrefix(line, "rename from "))
		case strings.HasPrefix(line, "rename to "):
			f.Path = unquote(strings.TrimPrefix(line, "rename to "))
		case strings.HasPrefix(line, "Binary files ") || strings.HasPrefix(line, "GIT binary patch"):
			f.Binary = true
		case strings.HasPrefix(line, "--- "):
			if p := strings.TrimPrefix(line, "--- "); p != "/dev/null" {
				f.OldPath = strings.TrimPrefix(unquote(p), "a/")
			}
		case strings.HasPrefix(line, "+++ "):
			if p := strings.TrimPrefix(line, "+++ "); p != "/dev/null" {
				f.Path = strings.TrimPrefix(unquote(p), "b/")
			}
		}
	}
	flush()
	for i := range files {
		if files[i].OldPath == files[i].Path || files[i].Status == "added" {
			files[i].OldPath = ""
		}
		if files[i].Status == "deleted" && files[i].Path == "" {
			files[i].Path = files[i].OldPath
		}
	}
	return files
}

// gitPaths splits "a/x b/y" of a diff --git line. Quoted and spaced names
// are read again from the ---/+++ or rename lines that follow.
func gitPaths(s string) (oldPath, newPath string) {
	if i := strings.Index(s, " b/"); strings.HasPrefix(s, "a/") && i > 0 {
		return s[2:i], s[i+3:]
	}
	return s, s
}

// unquote undoes git's C-style quoting of a path with unusual bytes.
func unquote(p string) string {
	if len(p) >= 2 && p[0] == '"' {
		if u, err := strconv.Unquote(p); err == nil {
			return u
		}
	}
	return p
}

// parseHunkHeader reads "@@ -a,b +c,d @@ section".
func parseHunkHeader(line string) (Hunk, bool) {
	rest := strings.TrimPrefix(line, "@@ ")
	ranges, section, ok := strings.Cut(rest, " @@")
	if !ok {
		return Hunk{}, false
	}
	oldR, newR, ok := strings.Cut(ranges, " ")
	if !ok || !strings.HasPrefix(oldR, "-") || !strings.HasPrefix(newR, "+") {
		return Hunk{}, false
	}
	var h Hunk
	h.OldStart, h.OldLines = parseRange(oldR[1:])
	h.NewStart, h.NewLines = parseRange(newR[1:])
	h.Section = strings.TrimSpace(section)
	return h, true
}

func parseRange(s string) (start, n int) {
	a, b, ok := strings.Cut(s, ",")
	start, _ = strconv.Atoi(a)
	n = 1
	if ok {
		n, _ = strconv.Atoi(b)
	}
	return start, n
}

// markWords pairs each run of removed lines with the run of added lines
// that follows it, line by line, and marks in both the words that differ.
func markWords(lines []Line) {
	for i := 0; i < len(lines); {
		if lines[i].Kind != Del {
			i++
			continue
		}
		d := i
		for i < len(lines) && lines[i].Kind == Del {
			i++
		}
		a := i
		for i < len(lines) && lines[i].Kind == Add {
			i++
		}
		dels, adds := lines[d:a], lines[a:i]
		for k := 0; k < len(dels) && k < len(adds); k++ {
			dels[k].Marks, adds[k].Marks = wordMarks(dels[k].Text, adds[k].Text)
		}
	}
}

// wordMarks returns the changed ranges of old and new, each widened to the
// words it touches. Two lines with nothing in common get no marks: the
// whole line is the change and marking all of it says nothing.
func wordMarks(old, new string) (om, nm []Span) {
	edits := udiff.Strings(old, new)
	if len(edits) == 0 {
		return nil, nil
	}
	shift := 0 // how far new's offsets run ahead of old's so far
	same := len(old)
	for _, e := range edits {
		if sp := widen(old, e.Start, e.End); sp.End > sp.Start {
			om = append(om, sp)
		}
		ns := e.Start + shift
		if e.New != "" {
			nm = append(nm, widen(new, ns, ns+len(e.New)))
		}
		shift += len(e.New) - (e.End - e.Start)
		same -= e.End - e.Start
	}
	if same*4 < len(old) {
		return nil, nil
	}
	return merge(om), merge(nm)
}

// widen grows [s, e) of line to the whole words its edges fall inside. An
// edge between two words, or between a word and a space, stays put.
func widen(line string, s, e int) Span {
	inWord := func(i int) bool {
		if i <= 0 || i >= len(line) {
			return false
		}
		before, _ := utf8.DecodeLastRuneInString(line[:i])
		after, _ := utf8.DecodeRuneInString(line[i:])
		return isWord(before) && isWord(after)
	}
	for inWord(s) {
		_, n := utf8.DecodeLastRuneInString(line[:s])
		s -= n
	}
	for inWord(e) {
		_, n := utf8.DecodeRuneInString(line[e:])
		e += n
	}
	return Span{s, e}
}

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// merge joins overlapping or touching spans, which widening makes common.
func merge(spans []Span) []Span {
	var out []Span
	for _, s := range spans {
		if n := len(out); n > 0 && s.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, s.End)
			continue
		}
		out = append(out, s)
	}
	return out
}
