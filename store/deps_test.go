package store_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStoreDependsOnNothingAboveIt keeps the store drivers below the
// agents' layer: none of them may be built with the pty, the emulator, the
// config, the usage readers or the verify gate. A failure names the
// package that points up and the import that brought it in.
func TestStoreDependsOnNothingAboveIt(t *testing.T) {
	t.Parallel()
	const mod = "github.com/orchestra-tui/orchestra-tui/"
	above := []string{"session", "vt", "config", "usage", "verify"}
	for _, pkg := range []string{"store", "store/sqlq", "store/sqlite", "store/postgres", "store/storetest"} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", mod+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			from, imports, _ := strings.Cut(line, ":")
			for _, imp := range strings.Fields(imports) {
				for _, a := range above {
					if imp == mod+a {
						t.Errorf("%s is built with %s: %s imports it; the store's records belong in task/",
							pkg, a, strings.TrimPrefix(from, mod))
					}
				}
			}
		}
	}
}
