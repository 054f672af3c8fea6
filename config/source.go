package config

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/forge"
)

// Source is the [source] section: the forge and repository whose issues
// become tasks and where pull requests are opened.
//
//	[source]
//	forge = "gitea"                 # or "github", "forgejo"
//	url = "https://git.example.org" # GitHub's default for "github"
//	repo = "team/app"
//	label = "orchestra"             # issues with this label become tasks
//	users = ["alice", "bob"]        # default: collaborators with write access
//	token_file = "~/.config/orchestra/gitea.token"   # or token_env = "GITEA_TOKEN"; never stored
//	webhook = "127.0.0.1:8089"      # where the forge's webhook deliveries are received; empty: polling only
//	webhook_secret_file = "~/.config/orchestra/webhook.secret"   # or webhook_secret_env; never stored
type Source struct {
	Forge     string   `toml:"forge"`
	URL       string   `toml:"url"`
	Repo      string   `toml:"repo"`
	Label     string   `toml:"label"`
	Users     []string `toml:"users"`
	TokenFile string   `toml:"token_file"`
	TokenEnv  string   `toml:"token_env"`
	// Webhook is the address (host:port) the webhook receiver listens
	// on; empty means none. WebhookSecretFile or WebhookSecretEnv holds
	// the secret the forge signs its deliveries with.
	Webhook           string `toml:"webhook"`
	WebhookSecretFile string `toml:"webhook_secret_file"`
	WebhookSecretEnv  string `toml:"webhook_secret_env"`
}

// Configured reports whether a forge is named.
func (s Source) Configured() bool { return strings.TrimSpace(s.Forge) != "" }

// errors checks the section; name is used in the messages.
func (s Source) errors(name string) []error {
	if !s.Configured() {
		return nil
	}
	var errs []error
	switch forge.Kind(s.Forge) {
	case forge.GitHub, forge.Gitea, forge.Forgejo:
	default:
		errs = append(errs, fmt.Errorf("%s: source.forge is %q; want \"github\", \"gitea\" or \"forgejo\"", name, s.Forge))
	}
	if o, n, ok := strings.Cut(s.Repo, "/"); !ok || o == "" || n == "" || strings.Contains(n, "/") {
		errs = append(errs, fmt.Errorf("%s: source.repo is %q; want owner/name", name, s.Repo))
	}
	if s.URL == "" && forge.Kind(s.Forge) != forge.GitHub {
		errs = append(errs, fmt.Errorf("%s: source.url is needed for %s (only GitHub has a default)", name, s.Forge))
	}
	if s.URL != "" {
		if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("%s: source.url must be an http(s) URL", name))
		}
	}
	if s.TokenFile != "" && s.TokenEnv != "" {
		errs = append(errs, fmt.Errorf("%s: source.token_file and source.token_env both set; keep one", name))
	}
	if s.Webhook != "" {
		if _, port, err := net.SplitHostPort(s.Webhook); err != nil || port == "" {
			errs = append(errs, fmt.Errorf("%s: source.webhook is %q; want host:port, e.g. 127.0.0.1:8089", name, s.Webhook))
		}
		if s.WebhookSecretFile == "" && s.WebhookSecretEnv == "" {
			errs = append(errs, fmt.Errorf("%s: source.webhook needs source.webhook_secret_file or source.webhook_secret_env: deliveries are only taken signed", name))
		}
	}
	if s.WebhookSecretFile != "" && s.WebhookSecretEnv != "" {
		errs = append(errs, fmt.Errorf("%s: source.webhook_secret_file and source.webhook_secret_env both set; keep one", name))
	}
	return errs
}

// WebhookSecret reads the secret the forge signs its webhook deliveries
// with, from webhook_secret_file or the variable webhook_secret_env
// names. Like the token it is returned to the caller only, never stored
// or logged; an empty one is an error, since an unsigned delivery is
// never taken.
func (s Source) WebhookSecret() (string, error) {
	var secret string
	switch {
	case s.WebhookSecretFile != "":
		b, err := readHomeFile(s.WebhookSecretFile)
		if err != nil {
			return "", fmt.Errorf("source.webhook_secret_file: %w", err)
		}
		secret = strings.TrimSpace(string(b))
	case s.WebhookSecretEnv != "":
		secret = strings.TrimSpace(os.Getenv(s.WebhookSecretEnv))
		if secret == "" {
			return "", fmt.Errorf("source.webhook_secret_env names %s, which is not set", s.WebhookSecretEnv)
		}
	}
	if secret == "" {
		return "", errors.New("source.webhook has no secret (set webhook_secret_file or webhook_secret_env)")
	}
	return secret, nil
}

// readHomeFile reads p, with a leading ~/ meaning the home directory.
func readHomeFile(p string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, err
		}
		p = filepath.Join(home, rest)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, errors.Unwrap(err))
	}
	return b, nil
}

// Token reads the forge's token: from token_file, else the variable
// token_env names, else for GitHub from GH_TOKEN, GITHUB_TOKEN or `gh auth
// token`. The token is returned to the caller only, never stored; an
// empty token with a nil error means none is configured (anonymous).
func (s Source) Token(ctx context.Context) (string, error) {
	switch {
	case s.TokenFile != "":
		b, err := readHomeFile(s.TokenFile)
		if err != nil {
			return "", fmt.Errorf("source.token_file: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	case s.TokenEnv != "":
		t := strings.TrimSpace(os.Getenv(s.TokenEnv))
		if t == "" {
			return "", fmt.Errorf("source.token_env names %s, which is not set", s.TokenEnv)
		}
		return t, nil
	case forge.Kind(s.Forge) != forge.GitHub:
		return "", nil
	}
	for _, v := range []string{"GH_TOKEN", "GITHUB_TOKEN"} {
		if t := strings.TrimSpace(os.Getenv(v)); t != "" {
			return t, nil
		}
	}
	gh, err := exec.LookPath("gh")
	if err != nil {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, gh, "auth", "token").Output()
	if err != nil {
		// Not logged in: anonymous, and the forge's 401 says so.
		return "", nil
	}
	return strings.TrimSpace(string(out)), nil
}

// ForgeConfig is the forge.Config of the section with token.
func (s Source) ForgeConfig(token string) forge.Config {
	return forge.Config{Kind: forge.Kind(s.Forge), URL: s.URL, Repo: s.Repo, Token: token}
}

// The lines orchestra.toml's printed defaults carry for [source] and
// [finalise] pr, kept beside the struct so the section stays in one file.
func init() {
	for k, v := range map[string]string{
		"source":                     "The forge (GitHub, Gitea, Forgejo) whose repository the tasks' pull requests go to and whose issues become tasks.",
		"source.forge":               `"github", "gitea" or "forgejo"; empty: no forge.`,
		"source.url":                 "The forge's address; empty for GitHub means api.github.com.",
		"source.repo":                "The repository, owner/name.",
		"source.label":               "Issues with this label become tasks.",
		"source.users":               "Who may create tasks and corrections; empty: the repository's collaborators with write access.",
		"source.token_file":          "A file holding the forge's token (never stored; for GitHub GH_TOKEN or `gh auth token` serve when empty).",
		"source.token_env":           "Or the environment variable holding it.",
		"source.webhook":             "Where the forge's webhook deliveries are received (host:port; the forge must reach it): they wake the poll at once. Empty: polling only.",
		"source.webhook_secret_file": "A file holding the secret the forge signs its webhook deliveries with (HMAC-SHA256; never stored).",
		"source.webhook_secret_env":  "Or the environment variable holding it.",
		"finalise.pr":                "Approve pushes the branch to the remote and opens a pull request on the [source] forge; its merge there completes the task.",
	} {
		keyDocs[k] = v
	}
}
