package giteatest_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchestra-tui/orchestra-tui/forge/gitea/giteatest"
)

// TestStartServesTheAPIAndStopLeavesNoProcess starts the server, uses its
// token and repository, stops it, and finds no process of the run user's
// left with this server's work path.
func TestStartServesTheAPIAndStopLeavesNoProcess(t *testing.T) {
	s := giteatest.Start(t)
	repo := s.CreateRepo(t, "app")
	var me struct {
		Login string `json:"login"`
	}
	if err := s.API(http.MethodGet, "api/v1/user", "", nil, &me); err != nil {
		t.Fatal(err)
	}
	if me.Login != s.Admin {
		t.Fatalf("token belongs to %q, want %q", me.Login, s.Admin)
	}
	var r struct {
		FullName string `json:"full_name"`
	}
	if err := s.API(http.MethodGet, "api/v1/repos/"+repo, "", nil, &r); err != nil {
		t.Fatal(err)
	}
	if r.FullName != repo {
		t.Fatalf("repository %q, want %q", r.FullName, repo)
	}
	s.Stop()
	if _, err := http.Get(s.URL + "api/v1/version"); err == nil {
		t.Fatal("the server still answers after Stop")
	}
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), s.WorkPath()) {
			t.Fatalf("process left after Stop: %s: %q", p, b)
		}
	}
}
