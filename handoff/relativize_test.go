package handoff

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

func TestRelativize(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	got := Relativize(root, []string{
		filepath.Join(root, "calc.go"),
		filepath.Join(root, "internal", "add.go"),
		"./docs/readme.md",
		filepath.Join(filepath.Dir(root), "elsewhere.go"),
	})
	require.Equal(t, []string{"calc.go", "internal/add.go", "docs/readme.md", filepath.Join(filepath.Dir(root), "elsewhere.go")}, got)
	require.Nil(t, Relativize(root, nil))
}

func TestRelativizedPathsPassParse(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	d := fullDocument()
	d.FilesChanged = Relativize(root, []string{filepath.Join(root, "calc.go")})
	content := `{"summary": "s", "steps": [{"title": "t", "files": ["` + filepath.ToSlash(root) + `/calc.go"]}]}`
	d.Artifacts[1] = NewArtifact(task.PhasePlan, []byte(RelativizeText(root, content)))
	d.Continuity.Screen = RelativizeText(root, "ok  \t"+root+"/calc 0.01s")
	data, err := Marshal(d)
	require.NoError(t, err)
	got, err := Parse(data)
	require.NoError(t, err)
	require.Equal(t, []string{"calc.go"}, got.FilesChanged)
	require.Equal(t, "ok  \tcalc 0.01s", got.Continuity.Screen)
}

func TestStripCredentials(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://ghp_token@example.com/acme/calc.git":  "https://example.com/acme/calc.git",
		"https://ana:secret@example.com/acme/calc.git": "https://example.com/acme/calc.git",
		"ssh://git:secret@example.com/acme/calc.git":   "ssh://git@example.com/acme/calc.git",
		"ssh://git@example.com/acme/calc.git":          "ssh://git@example.com/acme/calc.git",
		"git@example.com:acme/calc.git":                "git@example.com:acme/calc.git",
		"https://example.com/acme/calc.git":            "https://example.com/acme/calc.git",
	} {
		got := StripCredentials(in)
		require.Equal(t, want, got, in)
		require.Empty(t, originProblem(got), got)
	}
}
