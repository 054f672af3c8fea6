// Package giteatest starts a real Gitea server for tests: SQLite in a
// temporary work path, HTTP on 127.0.0.1 at a free port, an admin user with
// an API token and a repository. Gitea refuses to run as root, so under root
// (as in CI) it runs as the unprivileged user "orchestra-gitea", created
// with useradd when missing. The server is stopped and its work path removed
// when the test that started it ends.
//
// The binary comes from ORCHESTRA_GITEA_BIN and its options/ folder (locale
// files; the binary is built without bindata) from ORCHESTRA_GITEA_OPTIONS,
// or options/ beside the binary: `eval "$(bash .ci/install-gitea.sh)"`
// builds and names both. Without a binary a test is skipped, unless CI is
// set, when it fails.
package giteatest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RunUser is the unprivileged user the server runs as when the tests run as
// root.
const RunUser = "orchestra-gitea"

// Server is a running Gitea.
type Server struct {
	// URL is the server's root, with a trailing slash.
	URL string
	// Admin and Password log in as the site administrator; Token is an
	// API token of Admin's with every scope.
	Admin, Password, Token string

	dir  string
	conf string
	bin  string
	cred *syscall.Credential
	user string

	// took says how long each step of Start took, for the log.
	took []string

	mu      sync.Mutex
	web     *exec.Cmd
	exited  chan struct{}
	logFile *os.File
}

// Binary returns the Gitea binary and its options folder, or an error
// saying how to get them.
func Binary() (bin, options string, err error) {
	bin = os.Getenv("ORCHESTRA_GITEA_BIN")
	if bin == "" {
		return "", "", errors.New("ORCHESTRA_GITEA_BIN is not set; run eval \"$(bash .ci/install-gitea.sh)\"")
	}
	if _, err := os.Stat(bin); err != nil {
		return "", "", fmt.Errorf("ORCHESTRA_GITEA_BIN: %w", err)
	}
	options = os.Getenv("ORCHESTRA_GITEA_OPTIONS")
	if options == "" {
		options = filepath.Join(filepath.Dir(bin), "options")
	}
	if _, err := os.Stat(filepath.Join(options, "locale")); err != nil {
		return "", "", fmt.Errorf("gitea options folder %s has no locale/ (set ORCHESTRA_GITEA_OPTIONS): %w", options, err)
	}
	return bin, options, nil
}

// Start starts a server that lives until t ends, or skips t when there is
// no Gitea binary and the run is not CI.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, options, err := Binary()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("giteatest: %v (CI must build it: see .ci/run)", err)
		}
		t.Skipf("giteatest: %v", err)
	}
	start := time.Now()
	// Not t.TempDir: its parents are closed to other users, and the server
	// runs as one.
	dir, err := os.MkdirTemp("", "orchestra-gitea-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := &Server{dir: dir, Admin: "op", Password: "orchestra-test-pw"}
	if err := s.setup(bin, options); err != nil {
		t.Fatalf("giteatest: %v", err)
	}
	t.Cleanup(s.Stop)
	step := time.Now()
	if err := s.Restart(); err != nil {
		t.Fatalf("giteatest: %v", err)
	}
	s.took = append(s.took, "web up "+time.Since(step).Round(time.Millisecond).String())
	tok, err := s.CreateToken(s.Admin, s.Password)
	if err != nil {
		t.Fatalf("giteatest: %v", err)
	}
	s.Token = tok
	t.Logf("giteatest: Gitea at %s ready in %s (%s)", s.URL, time.Since(start).Round(time.Millisecond), strings.Join(s.took, ", "))
	return s
}

// setup writes the configuration, migrates the database and creates the
// admin user, all as the run user.
func (s *Server) setup(bin, options string) error {
	cred, name, err := runUser()
	if err != nil {
		return err
	}
	s.cred, s.user = cred, name
	// The binary is linked (or copied) into the work path: the cache that
	// holds it may sit under a home directory the run user cannot enter.
	s.bin = filepath.Join(s.dir, "gitea")
	if err := linkOrCopy(bin, s.bin); err != nil {
		return err
	}
	if err := copyTree(options, filepath.Join(s.dir, "options")); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	s.URL = fmt.Sprintf("http://127.0.0.1:%d/", port)
	s.conf = filepath.Join(s.dir, "custom", "conf", "app.ini")
	if err := os.MkdirAll(filepath.Dir(s.conf), 0o755); err != nil {
		return err
	}
	ini := fmt.Sprintf(`RUN_MODE = prod
RUN_USER = %[1]s
WORK_PATH = %[2]s
[server]
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[3]d
ROOT_URL = %[4]s
DISABLE_SSH = true
OFFLINE_MODE = true
[database]
DB_TYPE = sqlite3
PATH = %[2]s/data/gitea.db
[security]
INSTALL_LOCK = true
PASSWORD_HASH_ALGO = bcrypt$4
; Webhooks may deliver to 127.0.0.1, where the tests' receivers listen
; (the default, "external", refuses loopback addresses).
ALLOWED_HOST_LIST = loopback
[service]
DISABLE_REGISTRATION = true
[repository]
ROOT = %[2]s/repos
[cron.update_checker]
ENABLED = false
; What a start costs and the API tests do not need: the OAuth2 signing
; key (an RSA key made at the first start), the issue indexer's bleve
; index, and the persistent queues.
[oauth2]
ENABLED = false
[indexer]
ISSUE_INDEXER_TYPE = db
[queue]
TYPE = channel
[log]
LEVEL = Warn
`, name, s.dir, port, s.URL)
	if err := os.WriteFile(s.conf, []byte(ini), 0o644); err != nil {
		return err
	}
	step := time.Now()
	db := filepath.Join(s.dir, "data", "gitea.db")
	template := templatePath(bin)
	if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
		return err
	}
	if template != "" && copyFile(template, db) == nil {
		s.took = append(s.took, "database from the template "+time.Since(step).Round(time.Millisecond).String())
		return s.chownAll()
	}
	if err := s.chownAll(); err != nil {
		return err
	}
	if out, err := s.command("migrate").CombinedOutput(); err != nil {
		return fmt.Errorf("gitea migrate: %v\n%s", err, out)
	}
	if out, err := s.command("admin", "user", "create", "--username", s.Admin, "--password", s.Password,
		"--email", s.Admin+"@example.invalid", "--admin", "--must-change-password=false").CombinedOutput(); err != nil {
		return fmt.Errorf("gitea admin user create: %v\n%s", err, out)
	}
	s.took = append(s.took, "migrate and admin "+time.Since(step).Round(time.Millisecond).String())
	if template != "" {
		// Kept for the next Start: migrating takes most of a start. A
		// rename makes it whole or absent for a test binary beside.
		tmp := fmt.Sprintf("%s.%d.tmp", template, os.Getpid())
		if copyFile(db, tmp) == nil {
			_ = os.Rename(tmp, template)
		}
		_ = os.Remove(tmp)
	}
	return nil
}

// command is one gitea subcommand run as the run user in the work path.
func (s *Server) command(args ...string) *exec.Cmd {
	cmd := exec.Command(s.bin, append([]string{"-c", s.conf}, args...)...)
	cmd.Dir = s.dir
	// HOME is the work path: git, which Gitea runs, reads its config there.
	cmd.Env = append(os.Environ(), "GITEA_WORK_DIR="+s.dir, "HOME="+s.dir, "USER="+s.user)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// Restart starts the web server (again, after Stop) on the same port and
// data, and waits until its API answers.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.web != nil {
		return errors.New("gitea is already running")
	}
	logf, err := os.OpenFile(filepath.Join(s.dir, "web.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := s.command("web")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("start gitea web: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.web, s.exited, s.logFile = cmd, exited, logf
	if err := waitUp(s.URL, exited); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "web.log"))
		return fmt.Errorf("gitea did not answer: %v\n%s", err, tail(log, 4000))
	}
	return nil
}

// Stop stops the web server and waits until it and its children are gone.
// Restart starts it again; the test's cleanup calls Stop too.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.web == nil {
		return
	}
	pgid := s.web.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.exited
	}
	// Git processes Gitea started share its group; none may outlive it.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	_ = s.logFile.Close()
	s.web, s.exited, s.logFile = nil, nil, nil
}

// WorkPath is the server's work path (its data, repositories and log).
func (s *Server) WorkPath() string { return s.dir }

// Log returns the web server's log so far, for a failing test's message.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "web.log"))
	return string(tail(b, 8000))
}

// CreateToken creates an API token with every scope for user, logging in
// with password.
func (s *Server) CreateToken(name, password string) (string, error) {
	var out struct {
		SHA1 string `json:"sha1"`
	}
	body := map[string]any{"name": fmt.Sprintf("test-%d", time.Now().UnixNano()), "scopes": []string{"all"}}
	if err := s.do(http.MethodPost, "api/v1/users/"+name+"/tokens", basic(name, password), body, &out); err != nil {
		return "", fmt.Errorf("create token for %s: %w", name, err)
	}
	return out.SHA1, nil
}

// CreateUser creates a user who is not an admin and returns an API token
// of theirs.
func (s *Server) CreateUser(t testing.TB, name string) (token string) {
	t.Helper()
	pw := "pw-" + name + "-orchestra"
	body := map[string]any{"username": name, "password": pw, "email": name + "@example.invalid",
		"must_change_password": false}
	if err := s.do(http.MethodPost, "api/v1/admin/users", s.auth(), body, nil); err != nil {
		t.Fatalf("giteatest: create user %s: %v", name, err)
	}
	tok, err := s.CreateToken(name, pw)
	if err != nil {
		t.Fatalf("giteatest: %v", err)
	}
	return tok
}

// CreateRepo creates a repository of the admin's with an initial commit on
// main and returns "owner/name".
func (s *Server) CreateRepo(t testing.TB, name string) string {
	t.Helper()
	body := map[string]any{"name": name, "auto_init": true, "default_branch": "main"}
	if err := s.do(http.MethodPost, "api/v1/user/repos", s.auth(), body, nil); err != nil {
		t.Fatalf("giteatest: create repository %s: %v", name, err)
	}
	return s.Admin + "/" + name
}

// AddCollaborator gives user permission ("read", "write" or "admin") on
// repo ("owner/name").
func (s *Server) AddCollaborator(t testing.TB, repo, user, permission string) {
	t.Helper()
	if err := s.do(http.MethodPut, "api/v1/repos/"+repo+"/collaborators/"+user, s.auth(),
		map[string]any{"permission": permission}, nil); err != nil {
		t.Fatalf("giteatest: add collaborator %s to %s: %v", user, repo, err)
	}
}

// API calls the REST API with token (the admin's when empty): body is sent
// as JSON and the answer decoded into out when it is not nil.
func (s *Server) API(method, path, token string, body, out any) error {
	if token == "" {
		token = s.Token
	}
	return s.do(method, strings.TrimPrefix(path, "/"), "token "+token, body, out)
}

func (s *Server) auth() string {
	if s.Token != "" {
		return "token " + s.Token
	}
	return basic(s.Admin, s.Password)
}

func basic(user, password string) string {
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.SetBasicAuth(user, password)
	return r.Header.Get("Authorization")
}

func (s *Server) do(method, path, auth string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, tail(b, 500))
	}
	if out != nil && len(b) > 0 {
		return json.Unmarshal(b, out)
	}
	return nil
}

// waitUp polls the version endpoint until it answers 200: start-up is a
// child process becoming ready, with no signal to wait on but the socket.
func waitUp(root string, exited <-chan struct{}) error {
	deadline := time.Now().Add(90 * time.Second)
	client := &http.Client{Timeout: 5 * time.Second}
	for {
		resp, err := client.Get(root + "api/v1/version")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = errors.New(resp.Status)
		}
		select {
		case <-exited:
			return errors.New("gitea web exited")
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return err
		}
	}
}

var userMu sync.Mutex

// runUser returns the credential the server runs under: nil (this
// process's own) unless this process is root, when it is RunUser, created
// when missing.
func runUser() (*syscall.Credential, string, error) {
	if os.Geteuid() != 0 {
		u, err := user.Current()
		if err != nil {
			return nil, "", err
		}
		return nil, u.Username, nil
	}
	userMu.Lock()
	defer userMu.Unlock()
	u, err := user.Lookup(RunUser)
	if err != nil {
		// Another test binary may create it at the same moment: look
		// again whatever useradd says.
		out, addErr := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", RunUser).CombinedOutput()
		if u, err = user.Lookup(RunUser); err != nil {
			return nil, "", fmt.Errorf("running as root and cannot create the user %s to run Gitea as: %v %s", RunUser, addErr, out)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, u.Username, nil
}

// chownAll gives the work path to the run user.
func (s *Server) chownAll() error {
	if s.cred == nil {
		return nil
	}
	return filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == s.bin {
			return nil // a hard link to the cache's binary: leave its owner
		}
		return os.Lchown(p, int(s.cred.Uid), int(s.cred.Gid))
	})
}

// templatePath is where the migrated database with the admin user is kept
// beside the binary, named after the binary's size and time so a rebuilt
// one migrates again; "" when that folder cannot be written.
func templatePath(bin string) string {
	fi, err := os.Stat(bin)
	if err != nil {
		return ""
	}
	dir := filepath.Dir(bin)
	if f, err := os.CreateTemp(dir, ".probe-"); err == nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
	} else {
		return ""
	}
	return filepath.Join(dir, fmt.Sprintf("giteatest-%d-%d.db", fi.Size(), fi.ModTime().UnixNano()))
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// linkOrCopy hard-links src to dst, or copies it when they are on
// different file systems.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
