// Package sign holds the fleet key and the signature every task carries.
//
// The store is shared, and a task's verify command runs under /bin/sh on
// whichever engine claims it; its goal becomes an agent's brief. So the
// store alone must never be able to make an engine run something: every
// task is signed, when an engine accepts it, with a key the engines of one
// fleet share and the store never holds (a 0600 file on each machine), and
// an engine runs nothing of a task whose signature does not match.
//
// The signature is an HMAC-SHA256 over the task's spec (goal, verify
// command, harness, pipeline) and its id, so a row cannot borrow another's
// signature either. It is stored as "v1:KEYID:MAC", where KEYID names the
// key (a hash of it, not the key) so a refusal can tell "signed with
// another fleet's key" from "edited in the store".
package sign

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// KeyBytes is the length of a fleet key.
const KeyBytes = 32

// prefix versions the signature format.
const prefix = "v1"

// Key is a fleet's signing key.
type Key struct {
	secret []byte
	id     string
}

// NewKey returns a key holding secret (tests, and Load).
func NewKey(secret []byte) Key {
	sum := sha256.Sum256(append([]byte("orchestra-tui fleet key id\x00"), secret...))
	return Key{secret: append([]byte(nil), secret...), id: hex.EncodeToString(sum[:4])}
}

// ID names the key without revealing it: eight hex digits.
func (k Key) ID() string { return k.id }

// Zero reports whether k holds no key.
func (k Key) Zero() bool { return len(k.secret) == 0 }

// spec is the canonical encoding of what a task makes an engine run: each
// field length-prefixed, so no two different specs encode alike.
func spec(t task.Task) []byte {
	var b []byte
	field := func(s string) {
		b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
		b = append(b, s...)
	}
	field(string(t.ID))
	field(t.Goal)
	field(t.Verify)
	field(t.Harness)
	field(t.Pipeline.String())
	return b
}

func (k Key) mac(t task.Task) []byte {
	h := hmac.New(sha256.New, k.secret)
	h.Write(spec(t))
	return h.Sum(nil)
}

// Sign returns t's signature under k.
func (k Key) Sign(t task.Task) string {
	return prefix + ":" + k.id + ":" + hex.EncodeToString(k.mac(t))
}

// Errors of Check; the refusal text is the error's own.
var (
	ErrMissing  = errors.New("the task has no signature")
	ErrOtherKey = errors.New("the task was signed with another fleet key")
	ErrMismatch = errors.New("the task's signature does not match its goal, verify command, harness and pipeline")
)

// Check reports whether sig is k's signature of t; the error says how it
// is not, naming the signature, for the operator.
func (k Key) Check(t task.Task, sig string) error {
	if strings.TrimSpace(sig) == "" {
		return fmt.Errorf("%w: it was added to the store by something other than an engine of this fleet", ErrMissing)
	}
	parts := strings.Split(sig, ":")
	if len(parts) != 3 || parts[0] != prefix {
		return fmt.Errorf("%w: %q is not a signature this engine knows", ErrMismatch, clip(sig))
	}
	if parts[1] != k.id {
		return fmt.Errorf("%w (key %s; this engine's is %s): copy the fleet key to this machine or re-add the task", ErrOtherKey, clip(parts[1]), k.id)
	}
	got, err := hex.DecodeString(parts[2])
	if err != nil || !hmac.Equal(got, k.mac(t)) {
		return fmt.Errorf("%w: signature %s…, key %s; the row was changed in the store after it was signed", ErrMismatch, clip(parts[2]), k.id)
	}
	return nil
}

// clip shortens a signature part for a refusal line.
func clip(s string) string {
	s = task.PlainLine(s)
	if len(s) > 16 {
		return s[:16]
	}
	return s
}

// DefaultPath is where the fleet key lives when fleet.key is not set:
// orchestra-tui/fleet.key in the user's configuration directory
// ($XDG_CONFIG_HOME, else ~/.config), outside every repository and store.
func DefaultPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("fleet key: no configuration directory to keep it in (%v); set fleet.key in orchestra.toml", err)
	}
	return filepath.Join(dir, "orchestra-tui", "fleet.key"), nil
}

// Load reads the key at path, creating it (32 random bytes, hex, mode 0600)
// when there is none. created says this call made it: the engine that
// creates a key signs the tasks that predate signing (the upgrade), once.
// A key file readable by others is refused.
func Load(path string) (k Key, created bool, err error) {
	if path == "" {
		if path, err = DefaultPath(); err != nil {
			return Key{}, false, err
		}
	}
	k, err = read(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return k, false, err
	}
	if err := create(path); err != nil {
		if errors.Is(err, os.ErrExist) {
			k, err = read(path) // another engine made it first
			return k, false, err
		}
		return Key{}, false, err
	}
	k, err = read(path)
	return k, err == nil, err
}

func read(path string) (Key, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Key{}, err
	}
	if !fi.Mode().IsRegular() {
		return Key{}, fmt.Errorf("fleet key %s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return Key{}, fmt.Errorf("fleet key %s is readable by others (mode %04o): chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Key{}, fmt.Errorf("read fleet key: %w", err)
	}
	secret, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(secret) < KeyBytes {
		return Key{}, fmt.Errorf("fleet key %s does not hold a key (%d hex digits expected)", path, 2*KeyBytes)
	}
	return NewKey(secret), nil
}

// create writes a fresh key to path atomically: a temporary file linked
// into place, so two engines starting at once never read a half-written
// key, and the one that loses the race uses the winner's.
func create(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create fleet key: %w", err)
	}
	secret := make([]byte, KeyBytes)
	if _, err := rand.Read(secret); err != nil {
		return fmt.Errorf("create fleet key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".fleet.key-*")
	if err != nil {
		return fmt.Errorf("create fleet key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("create fleet key: %w", err)
	}
	if _, err := tmp.WriteString(hex.EncodeToString(secret) + "\n"); err != nil {
		tmp.Close()
		return fmt.Errorf("create fleet key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("create fleet key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("create fleet key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return err
		}
		return fmt.Errorf("create fleet key %s: %w", path, err)
	}
	return nil
}
