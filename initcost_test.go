package orchestratui_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The one binary runs as every process of the tool (the console, the
// engine, each session host, each one-shot command), so a package whose
// init builds big tables costs each of them. These packages are kept out
// of it: chroma's lexers and styles parse all of their ~280 language and
// 70 theme definitions at init (12 ms and 2.7 MB of heap), where the
// console colours a diff with its own few, built on the first diff drawn.
func TestBinaryLeavesOutHeavyInits(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./cmd/orchestra-tui").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	if !deps[module+"/ui"] {
		t.Fatalf("go list -deps does not list the binary's ui package:\n%s", out)
	}
	for _, heavy := range []string{
		"github.com/alecthomas/chroma/v2/lexers",
		"github.com/alecthomas/chroma/v2/styles",
	} {
		if deps[heavy] {
			t.Errorf("the binary imports %s, whose init runs in every process of it", heavy)
		}
	}
}
