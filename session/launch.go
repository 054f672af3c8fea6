package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/orchestra-tui/orchestra-tui/jail"
)

// Launch is a session's launch fingerprint: everything that decides what an
// agent is before it reads its brief. Two sessions with the same Hash ran
// the same program, at the same version, on the same model, with the same
// flags, directory, agent file, terminal size and environment names, so a
// difference in what they did is not explained by how they were launched
// (and a resumed conversation keeps its prompt cache only on an equal one).
//
// It holds the names of the environment variables the program was given,
// never their values: the fingerprint is stored and shown, and values may
// be secrets the harness passes on purpose.
type Launch struct {
	// Binary is argv[0] resolved in the session's PATH.
	Binary string `json:"binary"`
	// Version is the trimmed output of `Binary --version` ("" if it gave
	// none within a few seconds).
	Version string `json:"version"`
	// Model is the model asked for: the --model flag's value, else the
	// task's. The model that really answered is in the usage records.
	Model string `json:"model,omitempty"`
	// Argv is the argument vector as launched, without a brief delivered
	// as the last argument (task text is not part of how it was launched).
	Argv []string `json:"argv"`
	// PermissionMode is the --permission-mode flag's value
	// ("bypassPermissions" for --dangerously-skip-permissions); "" means
	// the program's own default or settings.
	PermissionMode string `json:"permission_mode,omitempty"`
	// AllowedTools lists the --allowedTools / --allowed-tools values.
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// Dir is the working directory.
	Dir string `json:"dir"`
	// AgentFile names the agent or instructions file: the --agent flag's
	// value, else the first of CLAUDE.md, AGENTS.md, .claude/CLAUDE.md in
	// Dir, with the first 12 hex digits of its sha256 after a colon.
	AgentFile string `json:"agent_file,omitempty"`
	// Cols and Rows are the terminal size at launch.
	Cols int `json:"cols"`
	Rows int `json:"rows"`
	// EnvNames are the sorted names of the variables the program got.
	EnvNames []string `json:"env_names"`
	// Hash is the sha256 (hex) of every field above; Short is its prefix.
	Hash string `json:"hash"`
}

// Resolve returns the program a session of spec would run: argv[0] found
// in the PATH of the environment the session would get from environ.
func Resolve(spec Spec, environ []string, dir string) (string, error) {
	if len(spec.Argv) == 0 {
		return "", fmt.Errorf("harness %q: argv is empty", spec.Name)
	}
	env := ScrubEnv(environ, spec)
	return lookPath(spec.Argv[0], envValue(env, "PATH"), dir)
}

// checkVersionTimeout bounds the version probe of `harness check`, which
// holds no launch: a CLI's first start on a loaded machine (opencode
// setting up its home) can take longer than a launch waits for.
const checkVersionTimeout = time.Minute

// Version returns the trimmed first line of `bin --version` run with the
// environment a session of spec would get ("" when it prints nothing), or
// an error saying it did not answer in time.
func Version(ctx context.Context, spec Spec, bin string, environ []string, dir string) (string, error) {
	return versionOf(ctx, bin, ScrubEnv(environ, spec), dir, checkVersionTimeout)
}

// NewLaunch computes the fingerprint of a session started with p. model is
// used when argv names none. The version probe runs the binary once per
// path, size and modification time, with the session's scrubbed
// environment, and is cached for the life of the process.
func NewLaunch(ctx context.Context, p Params, model string) (Launch, error) {
	spec := p.Spec
	if len(spec.Argv) == 0 {
		return Launch{}, fmt.Errorf("fingerprint harness %q: argv is empty", spec.Name)
	}
	environ := p.Environ
	if environ == nil {
		environ = os.Environ()
	}
	env := ScrubEnv(environ, spec)
	bin, err := lookPath(spec.Argv[0], envValue(env, "PATH"), p.Dir)
	if err != nil {
		return Launch{}, fmt.Errorf("fingerprint harness %q: %w", spec.Name, err)
	}
	l := Launch{
		Binary: bin, Version: launchVersion(ctx, bin, env, p.Dir),
		Argv: append([]string(nil), spec.Argv...), Dir: p.Dir, Cols: p.Cols, Rows: p.Rows,
	}
	flags := parseFlags(spec.Argv[1:])
	l.Model = flags.model
	if l.Model == "" {
		l.Model = model
	}
	l.PermissionMode, l.AllowedTools = flags.permissionMode, flags.allowedTools
	l.AgentFile = agentFile(flags.agent, p.Dir)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		l.EnvNames = append(l.EnvNames, name) // ScrubEnv sorts by name
	}
	l.Hash = l.hash()
	return l, nil
}

// Short returns the first 12 hex digits of the hash, enough to tell
// fingerprints apart on screen.
func (l Launch) Short() string {
	if len(l.Hash) > 12 {
		return l.Hash[:12]
	}
	return l.Hash
}

// JSON returns the fingerprint as stored in store.Session.Fingerprint.
func (l Launch) JSON() string {
	b, _ := json.Marshal(l) // only strings, ints and slices of strings
	return string(b)
}

// ParseLaunch reads a stored fingerprint; "" gives the zero Launch.
func ParseLaunch(s string) (Launch, error) {
	var l Launch
	if s == "" {
		return l, nil
	}
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		return Launch{}, fmt.Errorf("read launch fingerprint: %w", err)
	}
	return l, nil
}

// hash is the sha256 of the fingerprint's JSON with the hash left out.
// encoding/json writes struct fields in declaration order, so equal
// fingerprints always hash alike.
func (l Launch) hash() string {
	l.Hash = ""
	b, _ := json.Marshal(l)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// launchFlags are the flags of an agent CLI's argv the fingerprint names.
type launchFlags struct {
	model, permissionMode, agent string
	allowedTools                 []string
}

// parseFlags reads --model, --permission-mode, --agent and the tools of
// --allowedTools (space- or comma-separated, in one or several arguments),
// as Claude Code spells them; "--flag value" and "--flag=value" both work.
func parseFlags(args []string) launchFlags {
	var f launchFlags
	for i := 0; i < len(args); i++ {
		name, value, inline := strings.Cut(args[i], "=")
		next := func() string {
			if inline {
				return value
			}
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch name {
		case "--model":
			f.model = next()
		case "--permission-mode":
			f.permissionMode = next()
		case "--dangerously-skip-permissions":
			f.permissionMode = "bypassPermissions"
		case "--agent":
			f.agent = next()
		case "--allowedTools", "--allowed-tools":
			var vals []string
			if inline {
				vals = []string{value}
			}
			for !inline && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				vals = append(vals, args[i])
			}
			for _, v := range vals {
				f.allowedTools = append(f.allowedTools, strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })...)
			}
		}
	}
	return f
}

// agentFiles are the instruction files an agent CLI reads from its
// working directory, in the order the fingerprint looks for them.
// maxAgentFile bounds the instructions file read for its digest.
const maxAgentFile = 4 << 20

var agentFiles = []string{"CLAUDE.md", "AGENTS.md", filepath.Join(".claude", "CLAUDE.md")}

// agentFile names the agent the session runs: the --agent value, else the
// instructions file in dir with a digest of its content, since an edited
// file changes what the agent is told.
func agentFile(agent, dir string) string {
	if agent != "" {
		return agent
	}
	// The file is in the agent's worktree: read it confined and bounded, so
	// a CLAUDE.md turned into a link to /dev/zero or out of the tree reads
	// as absent rather than hanging or leaking.
	wt, err := jail.Open(dir)
	if err != nil {
		return ""
	}
	defer wt.Close()
	for _, name := range agentFiles {
		b, err := wt.ReadFile(name, maxAgentFile)
		if err != nil {
			continue
		}
		sum := sha256.Sum256(b)
		return filepath.ToSlash(name) + ":" + hex.EncodeToString(sum[:])[:12]
	}
	return ""
}

// versionTimeout bounds the version probe: a CLI that does not answer
// --version quickly gets an empty version rather than holding a launch.
const versionTimeout = 10 * time.Second

// launchVersion is the version a launch's fingerprint records: "" when
// the probe did not answer in time.
func launchVersion(ctx context.Context, bin string, env []string, dir string) string {
	v, _ := versionOf(ctx, bin, env, dir, versionTimeout)
	return v
}

// versionKey identifies one build of a binary.
type versionKey struct {
	path  string
	size  int64
	mtime int64
}

var versions sync.Map // versionKey -> string

// versionOf returns `bin --version`, trimmed, from the cache when the same
// file was probed before; waiting at most wait, after which it returns what
// was printed and an error saying so.
func versionOf(ctx context.Context, bin string, env []string, dir string, wait time.Duration) (string, error) {
	fi, err := os.Stat(bin)
	if err != nil {
		return "", nil
	}
	key := versionKey{path: bin, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if v, ok := versions.Load(key); ok {
		return v.(string), nil
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	cmd := exec.CommandContext(wctx, bin, "--version")
	cmd.Env, cmd.Dir = env, dir
	// The CLI and its children are one process group, killed together at
	// the deadline; one that escapes it and keeps the output open must
	// not hold the probe past the deadline either.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	v := strings.TrimSpace(string(out))
	if err != nil && wctx.Err() != nil {
		// Timed out or cancelled: a partial answer is not cached.
		if ctx.Err() == nil {
			return v, fmt.Errorf("%s --version did not answer within %s", filepath.Base(bin), wait)
		}
		return v, ctx.Err()
	}
	versions.Store(key, v)
	return v, nil
}
