package diff

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/repo"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
}

// TestParseRealPatch diffs a real repository with git and parses what it
// wrote: a modified, an added, a deleted, a renamed and a binary file.
func TestParseRealPatch(t *testing.T) {
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "calc.go", "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n")
	write(t, dir, "gone.txt", "bye\n")
	write(t, dir, "old name.txt", strings.Repeat("same line\n", 20))
	write(t, dir, "logo.png", "\x89PNG\x00\x01\x02")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "one")
	write(t, dir, "calc.go", "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b + 0\n}\n\nfunc Sub(a, b int) int { return a - b }\n")
	write(t, dir, "new.md", "# New\n")
	require.NoError(t, os.Remove(filepath.Join(dir, "gone.txt")))
	git(t, dir, "mv", "old name.txt", "new name.txt")
	write(t, dir, "logo.png", "\x89PNG\x00\x03\x04")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "two")

	r, err := repo.Open(dir)
	require.NoError(t, err)
	patch, err := r.Diff("HEAD~1", "HEAD")
	require.NoError(t, err)
	files := Parse(patch)
	byPath := map[string]File{}
	for _, f := range files {
		byPath[f.Path] = f
	}
	require.Len(t, files, 5, "%+v", files)

	calc := byPath["calc.go"]
	require.Equal(t, "modified", calc.Status)
	require.Equal(t, 3, calc.Added)
	require.Equal(t, 1, calc.Removed)
	require.Len(t, calc.Hunks, 1)
	h := calc.Hunks[0]
	require.Equal(t, 1, h.OldStart)
	var del, add Line
	for _, l := range h.Lines {
		if l.Kind == Del {
			del = l
		}
		if l.Kind == Add && add.Text == "" {
			add = l
		}
	}
	require.Equal(t, "\treturn a + b", del.Text)
	require.Equal(t, 4, del.Old)
	require.Equal(t, 4, add.New)
	require.Equal(t, []Span{{13, 17}}, add.Marks, "only the added words are marked: %q", add.Text[13:17])
	require.Contains(t, h.Text(), "-\treturn a + b\n+\treturn a + b + 0\n")

	require.Equal(t, "added", byPath["new.md"].Status)
	require.Equal(t, 1, byPath["new.md"].Added)
	require.Equal(t, "deleted", byPath["gone.txt"].Status)
	require.Equal(t, 1, byPath["gone.txt"].Removed)
	require.Equal(t, "renamed", byPath["new name.txt"].Status)
	require.Equal(t, "old name.txt", byPath["new name.txt"].OldPath)
	require.True(t, byPath["logo.png"].Binary)
	require.Empty(t, byPath["logo.png"].Hunks)
}

func TestHugeFileIsNamedNotDumped(t *testing.T) {
	var b strings.Builder
	b.WriteString("diff --git a/gen.txt b/gen.txt\nnew file mode 100644\n--- /dev/null\n+++ b/gen.txt\n")
	b.WriteString("@@ -0,0 +1,5000 @@\n")
	for range 5000 {
		b.WriteString("+x\n")
	}
	files := Parse([]byte(b.String()))
	require.Len(t, files, 1)
	require.True(t, files[0].TooLarge)
	require.Equal(t, 5000, files[0].Added, "its counts are still told")
	require.Empty(t, files[0].Hunks)
}

func TestWordMarks(t *testing.T) {
	om, nm := wordMarks("total := price * qty", "total := price * quantity")
	require.Equal(t, []Span{{17, 20}}, om)
	require.Equal(t, []Span{{17, 25}}, nm)
	om, nm = wordMarks("abc", "xyz")
	require.Nil(t, om, "nothing in common: the whole line is the change")
	require.Nil(t, nm)
}
