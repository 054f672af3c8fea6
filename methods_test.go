package orchestratui_test

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The limits issue 22 sets: the coordinator's loop type and the console's
// root model route and own their state, with each concern a service of its
// own; no type grows past typeLimit.
const (
	loopType  = "coord.Coordinator"
	rootModel = "ui.Model"
	rootLimit = 40
	typeLimit = 60
)

// ratchetFile holds today's method counts of the types over their limits:
// a count may go down (lower the file's figure with it), never up.
const ratchetFile = "testdata/methods.txt"

// methodCounts counts the methods declared on each named type of the
// module's non-test, non-generated Go files, keyed "pkgdir.Type".
func methodCounts(root string) (map[string]int, error) {
	counts := map[string]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) == 0 {
				continue
			}
			if name := receiverName(fn.Recv.List[0].Type); name != "" {
				counts[filepath.ToSlash(dir)+"."+name]++
			}
		}
		return nil
	})
	return counts, err
}

// receiverName is the type a receiver expression names: T, *T, T[K], *T[K].
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

func limitOf(typ string) int {
	if typ == loopType || typ == rootModel {
		return rootLimit
	}
	return typeLimit
}

func readRatchet(path string) (map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"pkg.Type COUNT\", got %q", path, n, line)
		}
		c, err := strconv.Atoi(fields[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		out[fields[0]] = c
	}
	return out, sc.Err()
}

// ratchetProblems says which counts break the limits beyond what the
// ratchet allows: a type over its limit may not grow past its ratchet
// figure, and a type not on the ratchet may not pass its limit.
func ratchetProblems(counts, ratchet map[string]int) []string {
	var out []string
	for _, typ := range slices.Sorted(func(yield func(string) bool) {
		for k := range counts {
			if !yield(k) {
				return
			}
		}
	}) {
		n, limit := counts[typ], limitOf(typ)
		if n <= limit {
			continue
		}
		allowed, ok := ratchet[typ]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s has %d methods, over the limit of %d: give a concern of it a type of its own", typ, n, limit))
		case n > allowed:
			out = append(out, fmt.Sprintf("%s has %d methods, %d more than %s allows (the limit is %d): counts may only go down", typ, n, n-allowed, ratchetFile, limit))
		}
	}
	return out
}

// TestMethodCounts reports the method counts of the coordinator's loop
// type, the console's root model and every type over the limit, and fails
// when one grows past testdata/methods.txt (or a new type passes the
// limit), so the split issue 22 asks for can only advance.
func TestMethodCounts(t *testing.T) {
	counts, err := methodCounts(".")
	if err != nil {
		t.Fatal(err)
	}
	ratchet, err := readRatchet(ratchetFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{loopType, rootModel} {
		if counts[typ] == 0 {
			t.Fatalf("no methods found on %s: was it renamed? Update this test's name for it", typ)
		}
	}
	var over []string
	for typ, n := range counts {
		if typ == loopType || typ == rootModel || n > typeLimit {
			over = append(over, typ)
		}
	}
	slices.SortFunc(over, func(a, b string) int { return counts[b] - counts[a] })
	for _, typ := range over {
		note := ""
		if r, ok := ratchet[typ]; ok && counts[typ] < r {
			note = fmt.Sprintf(" (down from %d: lower %s to match)", r, ratchetFile)
		}
		t.Logf("%-28s %4d methods (limit %d)%s", typ, counts[typ], limitOf(typ), note)
	}
	for _, p := range ratchetProblems(counts, ratchet) {
		t.Error(p)
	}
}

func TestRatchetRefusesGrowthAndNewGiants(t *testing.T) {
	counts := map[string]int{"coord.Coordinator": 150, "ui.Model": 30, "vt.Screen": 61, "store.X": 60, "ui.Old": 70}
	ratchet := map[string]int{"coord.Coordinator": 149, "ui.Old": 80}
	got := ratchetProblems(counts, ratchet)
	want := []string{
		"coord.Coordinator has 150 methods, 1 more than testdata/methods.txt allows (the limit is 40): counts may only go down",
		"vt.Screen has 61 methods, over the limit of 60: give a concern of it a type of its own",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if n := receiverName(&ast.StarExpr{X: &ast.IndexExpr{X: ast.NewIdent("Ring"), Index: ast.NewIdent("T")}}); n != "Ring" {
		t.Fatalf("receiver *Ring[T] named %q", n)
	}
}
