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
// Package testing is left out too: the helpers that find the agent CLIs
// for the demo and the tests (demo/agentcli, demo/claudecli) take a test
// through an interface of their own rather than linking testing into every
// process.
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
		"testing",
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
	var bytes, allocs int
	var lines []string
	for _, in := range initTrace(t) {
		if !strings.HasPrefix(in.pkg, module+"/") {
			continue
		}
		bytes += in.bytes
		allocs += in.allocs
		lines = append(lines, in.line)
	}
	if len(lines) == 0 {
		t.Fatalf("no init trace of the module's packages")
	}
	if bytes > maxBytes || allocs > maxAllocs {
		t.Errorf("the module's package inits allocate %d bytes in %d allocations (limits %d, %d); make the new package-level state lazy (sync.OnceValue):\n%s",
			bytes, allocs, maxBytes, maxAllocs, strings.Join(lines, "\n"))
	}
	t.Logf("the module's package inits: %d bytes, %d allocations", bytes, allocs)
}

// The copies in third_party/ exist to take work out of their package's
// init (third_party/README.md); each is held to what its init costs now.
// atotto/clipboard looked for its commands along PATH at init (216
// allocations, a dozen stat calls per directory of PATH), now on the first
// paste; jsonschema compiled five metaschemas (21,000 allocations), now on
// the first Compile.
func TestInitCostOfThirdPartyCopies(t *testing.T) {
	limits := map[string]int{ // allocations
		"github.com/atotto/clipboard":              8,
		"github.com/santhosh-tekuri/jsonschema/v6": 200,
	}
	seen := map[string]bool{}
	for _, in := range initTrace(t) {
		limit, ok := limits[in.pkg]
		if !ok {
			continue
		}
		seen[in.pkg] = true
		if in.allocs > limit {
			t.Errorf("%s's init allocates %d times (limit %d): the copy in third_party/ no longer defers its work\n%s", in.pkg, in.allocs, limit, in.line)
		}
	}
	for pkg := range limits {
		if !seen[pkg] {
			t.Errorf("no init trace of %s: is it still linked, through its copy in third_party/?", pkg)
		}
	}
}

type pkgInit struct {
	pkg           string
	bytes, allocs int
	line          string
}

// initTrace is the binary's package inits as GODEBUG=inittrace=1 reports
// them for `orchestra-tui version`.
func initTrace(t *testing.T) []pkgInit {
	t.Helper()
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
	var inits []pkgInit
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) != 11 || f[0] != "init" {
			continue
		}
		b, err1 := strconv.Atoi(f[7])
		a, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			t.Fatalf("cannot read the init trace line %q", l)
		}
		inits = append(inits, pkgInit{pkg: f[1], bytes: b, allocs: a, line: l})
	}
	if len(inits) == 0 {
		t.Fatalf("no init trace in:\n%s", out)
	}
	return inits
}
