package repo

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchFiles is the size of the generated repository.
const benchFiles = 2000

// benchRepo generates a repository of benchFiles committed files in 40
// directories, with one modified and one untracked file, the shape of a
// task worktree mid-run.
func benchRepo(b *testing.B) string {
	b.Helper()
	dir := initRepo(b, true)
	for i := range benchFiles {
		name := filepath.Join(dir, fmt.Sprintf("pkg%02d", i%40), fmt.Sprintf("file%04d.go", i))
		writeFile(b, name, fmt.Sprintf("package pkg\n\nconst V%d = %d\n", i, i))
	}
	gitT(b, dir, "add", "-A")
	gitT(b, dir, "commit", "-q", "-m", "generated")
	gitT(b, dir, "branch", "base")
	writeFile(b, filepath.Join(dir, "pkg00", "file0000.go"), "package pkg\n\nconst V0 = -1\n")
	writeFile(b, filepath.Join(dir, "pkg01", "new.go"), "package pkg\n")
	return dir
}

// BenchmarkVerifiedState measures the git CLI status path on a 2,000-file
// worktree:
//
//	go test -run '^$' -bench VerifiedState -count 5 ./repo/
func BenchmarkVerifiedState(b *testing.B) {
	dir := benchRepo(b)
	b.Run("cli-status", func(b *testing.B) {
		for b.Loop() {
			st, err := readStatus(dir)
			require.NoError(b, err)
			require.Len(b, st.dirty, 2)
		}
	})
	b.Run("cli-verified-state", func(b *testing.B) {
		for b.Loop() {
			st, err := VerifiedState(dir, "base")
			require.NoError(b, err)
			require.Len(b, st.Changed, 2)
		}
	})
}
