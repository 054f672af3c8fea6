// The tests of the tree as a whole: the layer order ARCHITECTURE.md's
// package map declares, read from the document so the map is checked, not
// trusted.
package orchestratui_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/orchestra-tui/orchestra-tui"

// entry is one line of the package map: a folder (or a package) and every
// package under it, at a position in the layer order.
type entry struct {
	name string // "coord", "cmd/orchestra-tui"
	line int    // in ARCHITECTURE.md
	rank int    // 0 is the top of the map
}

// packageMap reads the package map from ARCHITECTURE.md: the first code
// block after "## Packages", one entry per line that starts in the first
// column ("name/   what it holds"); lines starting with # head a group, and
// indented lines continue a description.
func packageMap(doc []byte) ([]entry, error) {
	var (
		out             []entry
		inSection, open bool
	)
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case !inSection:
			inSection = strings.TrimSpace(line) == "## Packages"
		case strings.HasPrefix(line, "```"):
			if open {
				return out, nil
			}
			open = true
		case !open, line == "", strings.HasPrefix(line, "#"), line[0] == ' ':
		default:
			name := strings.TrimSuffix(strings.Fields(line)[0], "/")
			out = append(out, entry{name: name, line: n, rank: len(out)})
		}
	}
	if len(out) == 0 {
		return nil, errors.New(`no package map: ARCHITECTURE.md needs a code block after "## Packages"`)
	}
	return out, errors.New("the package map's code block is not closed")
}

// entryOf returns the entry that holds package rel (a path inside the
// module): the longest name that is rel or a folder above it.
func entryOf(m []entry, rel string) (entry, bool) {
	var best entry
	found := false
	for _, e := range m {
		if (rel == e.name || strings.HasPrefix(rel, e.name+"/")) && (!found || len(e.name) > len(best.name)) {
			best, found = e, true
		}
	}
	return best, found
}

// goPackage is what go list says of one package of the module.
type goPackage struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

func listPackages(t *testing.T) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list's output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// rel is path inside the module; false for the standard library, other
// modules and the module's root (this file's package, which only tests).
func rel(path string) (string, bool) {
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

// TestLayersPointDown checks ARCHITECTURE.md's package map against the
// tree: every package of the module is on the map, every entry of the map
// is a package or a folder of some, and every import, tests' included,
// points to the importer's own entry or one below it.
func TestLayersPointDown(t *testing.T) {
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	m, err := packageMap(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range layerProblems(m, listPackages(t)) {
		t.Error(p)
	}
}

// layerProblems lists, as sentences, what of pkgs breaks the map m.
func layerProblems(m []entry, pkgs []goPackage) []string {
	used := map[string]bool{}
	var problems []string
	for _, p := range pkgs {
		from, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		fe, ok := entryOf(m, from)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s is not on ARCHITECTURE.md's package map: add it where its imports put it", from))
			continue
		}
		used[fe.name] = true
		for _, by := range []struct {
			who  string
			imps []string
		}{{from + " imports", p.Imports}, {"the tests of " + from + " import", append(p.TestImports, p.XTestImports...)}} {
			who, imps := by.who, by.imps
			for _, imp := range imps {
				to, ok := rel(imp)
				if !ok {
					continue
				}
				te, ok := entryOf(m, to)
				if ok && te.rank < fe.rank {
					problems = append(problems, fmt.Sprintf("%s %s, which points up: ARCHITECTURE.md puts %s/ (line %d) above %s/ (line %d)",
						who, to, te.name, te.line, fe.name, fe.line))
				}
			}
		}
	}
	for _, e := range m {
		if !used[e.name] {
			problems = append(problems, fmt.Sprintf("ARCHITECTURE.md line %d maps %s/, which holds no package", e.line, e.name))
		}
	}
	return problems
}

func TestPackageMapParse(t *testing.T) {
	doc := []byte("# A\n\n## Packages\n\n```\n# the top\ncmd/x    the binary\n         more of it\ncoord/   the loop\n\ntask/    contracts\n```\n\ncoord/ in prose\n")
	m, err := packageMap(doc)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range m {
		names = append(names, fmt.Sprintf("%s@%d#%d", e.name, e.line, e.rank))
	}
	if got, want := strings.Join(names, " "), "cmd/x@7#0 coord@9#1 task@11#2"; got != want {
		t.Fatalf("parsed %s, want %s", got, want)
	}
	if e, ok := entryOf(m, "coord/sub"); !ok || e.name != "coord" {
		t.Fatalf("coord/sub belongs to %v %v", e, ok)
	}
	if _, ok := entryOf(m, "coordx"); ok {
		t.Fatal("coordx matched coord")
	}
}

func TestLayerProblemsNameTheImportThatPointsUp(t *testing.T) {
	m, err := packageMap([]byte("## Packages\n```\ncoord/  loop\nstore/  records\ntask/   contracts\nold/    gone\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	pkgs := []goPackage{
		{ImportPath: module + "/coord", Imports: []string{module + "/store", "fmt"}},
		{ImportPath: module + "/store", Imports: []string{module + "/task"}, TestImports: []string{module + "/coord"}},
		{ImportPath: module + "/store/sqlite", Imports: []string{module + "/store"}},
		{ImportPath: module + "/task", Imports: []string{module + "/store"}},
		{ImportPath: module + "/vt"},
	}
	got := strings.Join(layerProblems(m, pkgs), "\n")
	for _, want := range []string{
		"the tests of store import coord, which points up: ARCHITECTURE.md puts coord/ (line 3) above store/ (line 4)",
		"task imports store, which points up",
		"vt is not on ARCHITECTURE.md's package map",
		"ARCHITECTURE.md line 6 maps old/, which holds no package",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems do not say %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n") + 1; n != 4 {
		t.Errorf("%d problems, want 4:\n%s", n, got)
	}
}
