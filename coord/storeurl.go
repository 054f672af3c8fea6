package coord

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// storeURLFDEnv names the descriptor a re-executed process reads the store
// URL from (HideStoreURL).
const storeURLFDEnv = "ORCHESTRA_STORE_URL_FD"

// heldURL is the store URL HideStoreURL took out of the environment.
var heldURL string

// HideStoreURL keeps the store's password out of every process an agent
// could look at. An environment is readable, as /proc/PID/environ, by any
// process of the same user, and it is the one the process was started
// with, whatever the process changes later. So when ORCHESTRA_STORE_URL
// holds a password, the process starts itself again in its place (same
// pid), the URL handed over on a pipe and not in the environment; and it
// is removed from the environment every child inherits, so session hosts,
// agents, verify gates and notify commands never see it. Call it first in
// main.
func HideStoreURL() {
	if fd := os.Getenv(storeURLFDEnv); fd != "" {
		os.Unsetenv(storeURLFDEnv)
		if n, err := strconv.Atoi(fd); err == nil {
			f := os.NewFile(uintptr(n), "store-url")
			b, err := io.ReadAll(io.LimitReader(f, 64<<10))
			f.Close()
			if err == nil {
				heldURL = string(b)
			}
		}
		return
	}
	u := os.Getenv(StoreURLEnv)
	if u == "" || !hasPassword(u) {
		return
	}
	heldURL = u
	os.Unsetenv(StoreURLEnv)
	_ = reexecWithout(u) // on failure the URL is still out of every child's environment
}

// reexecWithout replaces this process by itself with the URL on a pipe.
func reexecWithout(u string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	if len(u) > 60<<10 { // the pipe's buffer holds it without a reader
		w.Close()
		return fmt.Errorf("store URL too long")
	}
	if _, err := io.WriteString(w, u); err != nil {
		w.Close()
		return err
	}
	w.Close()
	// The read end survives the exec; nothing else does.
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, r.Fd(), syscall.F_SETFD, 0); errno != 0 {
		return errno
	}
	env := append(os.Environ(), storeURLFDEnv+"="+strconv.Itoa(int(r.Fd())))
	return syscall.Exec(self, os.Args, env)
}

// hasPassword reports whether a postgres:// URL carries a password.
func hasPassword(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return strings.Contains(raw, "password")
	}
	if _, ok := u.User.Password(); ok {
		return true
	}
	return u.Query().Get("password") != ""
}

// storeURLFromEnv is ORCHESTRA_STORE_URL, wherever HideStoreURL keeps it.
func storeURLFromEnv() string {
	if heldURL != "" {
		return heldURL
	}
	return os.Getenv(StoreURLEnv)
}

// StoreURLSet reports whether ORCHESTRA_STORE_URL names a store.
func StoreURLSet() bool { return storeURLFromEnv() != "" }

// StoreEnv returns env with ORCHESTRA_STORE_URL put back, for a process of
// this binary that must open the same store (a background engine); it
// hides the URL again as it starts.
func StoreEnv(env []string) []string {
	if heldURL == "" {
		return env
	}
	return append(env[:len(env):len(env)], StoreURLEnv+"="+heldURL)
}

// checkTLS refuses a store on another machine whose URL leaves TLS to
// chance: without sslmode, the client tries TLS and silently falls back to
// plaintext (sslmode=prefer), password included. Any explicit sslmode, in
// the URL or PGSSLMODE, is the operator's choice and is kept.
func checkTLS(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return nil // the driver says what is wrong with it
	}
	q := u.Query()
	if q.Get("sslmode") != "" || os.Getenv("PGSSLMODE") != "" {
		return nil
	}
	hosts := strings.Split(u.Host, ",")
	if h := q.Get("host"); h != "" {
		hosts = strings.Split(h, ",")
	}
	for _, h := range hosts {
		if !localHost(h) {
			return fmt.Errorf("the store at %s is not on this machine and its URL sets no sslmode, so the connection could silently fall back to plaintext, password included: add sslmode=verify-full (or require) to the URL, or sslmode=disable to accept plaintext", hostOnly(h))
		}
	}
	return nil
}

// localHost reports whether a URL's host names this machine: empty (the
// default socket), a unix socket directory, localhost or a loopback address.
func localHost(h string) bool {
	h = hostOnly(h)
	if h == "" || strings.HasPrefix(h, "/") || strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

func hostOnly(h string) string {
	if strings.HasPrefix(h, "/") {
		return h
	}
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return h
}
