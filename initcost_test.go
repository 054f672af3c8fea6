package orchestratui_test

import (
	"os"
	"os/exec"
	"strconv"
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

// The project's own packages build what a process may need on first use
// (regular expressions, message printers), not at init: a one-shot command
// such as `orchestra-tui correct` runs every package's init before it
// dials the engine, and its whole cost is measured against `tmux
// send-keys` (bench/correct.sh). Their inits together allocated 186 KB in
// 1584 allocations, a dozen compiled regexps among them; lazily, 43 KB in
// 424. The limits hold that gain; lower them as inits get cheaper.
func TestInitCostOfOwnPackages(t *testing.T) {
	const maxBytes, maxAllocs = 56 << 10, 520
	bin := t.TempDir() + "/orchestra-tui"
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/orchestra-tui").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c := exec.Command(bin, "version")
	c.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", bin, err, out)
	}
	// init PKG @T ms, C ms clock, B bytes, A allocs
	var bytes, allocs int
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) != 11 || f[0] != "init" || !strings.HasPrefix(f[1], module+"/") {
			continue
		}
		b, err1 := strconv.Atoi(f[7])
		a, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			t.Fatalf("cannot read the init trace line %q", l)
		}
		bytes += b
		allocs += a
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		t.Fatalf("no init trace of the module's packages in:\n%s", out)
	}
	if bytes > maxBytes || allocs > maxAllocs {
		t.Errorf("the module's package inits allocate %d bytes in %d allocations (limits %d, %d); make the new package-level state lazy (sync.OnceValue):\n%s",
			bytes, allocs, maxBytes, maxAllocs, strings.Join(lines, "\n"))
	}
	t.Logf("the module's package inits: %d bytes, %d allocations", bytes, allocs)
}
