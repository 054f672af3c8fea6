package session

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Where the machine delegates a cgroup v2 to the console (the process's own
// cgroup is writable and the kernel has cgroup.kill, 5.14 and later), each
// session's program starts inside a cgroup of its own (clone3 with
// CLONE_INTO_CGROUP, so not one instruction runs outside it), and stopping
// the session ends with cgroup.kill: every process in it dies, including a
// descendant that daemonised and exec'd with a clean environment, which
// the marks cannot find. Elsewhere the process group and the marks
// (tree_linux.go) are all there is.

// cgroupPrefix starts the name of every session cgroup, followed by the
// owner, task and session marks: orchestra-@<owner>-<task>-<session>
// (cgroupName). A cgroup made before the owner mark existed is named
// orchestra-<task>-<session>; a task's name never starts with '@', so the
// two cannot be confused.
const cgroupPrefix = "orchestra-"

var cgroups struct {
	once sync.Once
	base string // the directory session cgroups are made in; "" when none
	why  string // why there is none
}

// cgroupBase returns the directory session cgroups are made in, or "" and
// why not. It is found once: the process's own cgroup v2, when a child
// made in it (and removed at once) has cgroup.kill.
func cgroupBase() (string, string) {
	cgroups.once.Do(func() { cgroups.base, cgroups.why = findCgroupBase() })
	return cgroups.base, cgroups.why
}

func findCgroupBase() (string, string) {
	rel, err := ownCgroup()
	if err != nil {
		return "", err.Error()
	}
	mount, root, err := cgroup2Mount()
	if err != nil {
		return "", err.Error()
	}
	r, err := filepath.Rel(root, rel)
	if err != nil || strings.HasPrefix(r, "..") {
		return "", fmt.Sprintf("this process's cgroup %s is outside the cgroup2 mount's root %s", rel, root)
	}
	base := filepath.Join(mount, r)
	probe := filepath.Join(base, fmt.Sprintf("%sprobe-%d", cgroupPrefix, os.Getpid()))
	if err := os.Mkdir(probe, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Sprintf("the cgroup v2 %s is not delegated to this user (%v)", base, errors.Unwrap(err))
	}
	defer os.Remove(probe)
	if _, err := os.Stat(filepath.Join(probe, "cgroup.kill")); err != nil {
		return "", "the kernel has no cgroup.kill (Linux 5.14 or later has)"
	}
	sweepCgroups(base)
	return base, ""
}

// sweepCgroups removes the empty session cgroups under base that a process
// killed before it could remove them left behind (rmdir fails on one that
// still holds a process, which stays for its task's next fencing). One
// made less than sweepAge ago is left: it may be another host's, of this
// engine or of another engine on the machine, between its mkdir and the
// start of its program, which removing it would make fail.
func sweepCgroups(base string) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), cgroupPrefix) {
			continue
		}
		if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < sweepAge {
			continue
		}
		_ = os.Remove(filepath.Join(base, e.Name()))
	}
}

// sweepAge is how old an empty session cgroup must be for sweepCgroups.
const sweepAge = time.Minute

// ownCgroup returns this process's cgroup v2 path ("0::/path" in
// /proc/self/cgroup).
func ownCgroup() (string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("no /proc/self/cgroup: %w", err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, nil
		}
	}
	return "", errors.New("this process is in no cgroup v2 hierarchy")
}

// cgroup2Mount returns where the cgroup v2 hierarchy is mounted, and the
// hierarchy path its root shows (/ unless the mount is of a sub-tree).
func cgroup2Mount() (mount, root string, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", fmt.Errorf("no /proc/self/mountinfo: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source super
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, fl := range fields {
			if fl == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+1 >= len(fields) || fields[sep+1] != "cgroup2" {
			continue
		}
		return unescapeMount(fields[4]), unescapeMount(fields[3]), nil
	}
	return "", "", errors.New("no cgroup2 file system is mounted")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TreeMechanism says how this process stops a session's whole process
// tree, for `harness check` and the engine's log.
func TreeMechanism() string {
	if base, _ := cgroupBase(); base != "" {
		return "a cgroup v2 per session under " + base + ", ended with cgroup.kill"
	}
	_, why := cgroupBase()
	return "the process group and the marked descendants (no cgroup: " + why + ")"
}

// cgroup is one session's cgroup.
type cgroup struct {
	dir string
	fd  int // the directory, open until the program has started in it
}

// cgroupName is the directory name of a session's cgroup; only the marks'
// safe characters are kept (so an owner holds no '-').
func cgroupName(owner, task, session string) string {
	if owner == "" {
		return cgroupPrefix + cleanMark(task) + "-" + cleanMark(session)
	}
	return cgroupPrefix + "@" + cleanMark(owner) + "-" + cleanMark(task) + "-" + cleanMark(session)
}

// cleanMark keeps a mark's letters, digits, '_' and '.'; anything else
// becomes '_'.
func cleanMark(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// parseCgroupName splits a session cgroup's name into its owner ("" for
// one named before the owner mark) and the rest, <task>-<session>.
func parseCgroupName(name string) (owner, rest string, ok bool) {
	rest, ok = strings.CutPrefix(name, cgroupPrefix)
	if !ok {
		return "", "", false
	}
	if r, owned := strings.CutPrefix(rest, "@"); owned {
		owner, rest, ok = strings.Cut(r, "-")
		return owner, rest, ok
	}
	return "", rest, true
}

// newCgroup makes the session's cgroup, or returns nil where there is
// none to make (the session then relies on its marks).
func newCgroup(owner, task, session string) *cgroup {
	base, _ := cgroupBase()
	if base == "" || task == "" || session == "" {
		return nil
	}
	dir := filepath.Join(base, cgroupName(owner, task, session))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil
	}
	return &cgroup{dir: dir, fd: fd}
}

// attach makes the program start inside the cgroup.
func (c *cgroup) attach(attrs *syscall.SysProcAttr) {
	if c == nil {
		return
	}
	attrs.UseCgroupFD = true
	attrs.CgroupFD = c.fd
}

// started closes the directory once the program runs in it.
func (c *cgroup) started() {
	if c != nil && c.fd >= 0 {
		_ = unix.Close(c.fd)
		c.fd = -1
	}
}

// kill sends SIGKILL to every process in the cgroup, without waiting.
func (c *cgroup) kill() {
	if c != nil {
		_ = os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0)
	}
}

// signal sends sig to every process in the cgroup but skip, without
// waiting: the polite stop before cgroup.kill.
func (c *cgroup) signal(skip int, sig syscall.Signal) {
	if c == nil {
		return
	}
	fds := memberFDs(c.dir, skip)
	signal(fds, unix.Signal(sig))
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// memberFDs opens a pidfd of each process in the cgroup dir but skip,
// checking that the process behind it is still in the cgroup (a pid read
// from cgroup.procs could have been reused since).
func memberFDs(dir string, skip int) []int {
	var fds []int
	rel := "/" + filepath.Base(dir)
	for _, pid := range cgroupProcs(dir) {
		if pid == skip {
			continue
		}
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		if own, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup"); err != nil || !inCgroup(own, rel) {
			unix.Close(fd)
			continue
		}
		fds = append(fds, fd)
	}
	return fds
}

func cgroupProcs(dir string) []int {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for f := range bytes.FieldsSeq(data) {
		if pid, err := strconv.Atoi(string(f)); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// end kills every process in the cgroup but skip (the session's leader,
// which its waiter reaps), waits up to d for it to be empty, and removes
// it. It returns a *RemainError naming what is left.
func (c *cgroup) end(what string, skip int, d time.Duration) error {
	if c == nil {
		return nil
	}
	c.started()
	return endCgroup(what, c.dir, skip, d)
}

func endCgroup(what, dir string, skip int, d time.Duration) error {
	// Hold a pidfd of each member first: the killed ones re-parented to
	// this process (the subreaper) are then reaped through it, and no
	// other child of this process is ever touched.
	fds := memberFDs(dir, skip)
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENODEV) {
			// Removed already, or being removed: the kernel answers
			// ENODEV for a cgroup that another process (the previous
			// engine's cleanup, its host) rmdir'ed a moment ago. Its
			// processes are gone either way; a launch refused for it
			// charged the task an attempt (seen in the soak).
			return nil
		}
		return fmt.Errorf("%s: cgroup.kill: %w", what, err)
	}
	d = max(d, time.Second)
	waitGone(fds, d)
	if !waitEmpty(dir, d) {
		return &RemainError{What: what, Pids: cgroupProcs(dir)}
	}
	_ = os.Remove(dir)
	return nil
}

// inCgroup reports whether /proc/PID/cgroup content names a cgroup v2
// path ending in rel.
func inCgroup(content []byte, rel string) bool {
	for line := range bytes.SplitSeq(content, []byte("\n")) {
		if p, ok := bytes.CutPrefix(line, []byte("0::")); ok {
			return bytes.HasSuffix(p, []byte(rel))
		}
	}
	return false
}

// waitEmpty waits until the cgroup has no live process ("populated 0" in
// cgroup.events, which the kernel signals as a priority event on the
// file), or until d has passed.
func waitEmpty(dir string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	f, err := os.Open(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	defer f.Close()
	buf := make([]byte, 256)
	for {
		n, err := f.ReadAt(buf, 0)
		if n == 0 && err != nil {
			return false
		}
		if bytes.Contains(buf[:n], []byte("populated 0")) {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		pfd := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLPRI}}
		if _, err := unix.Poll(pfd, int(left/time.Millisecond)+1); err != nil && !errors.Is(err, syscall.EINTR) {
			return false
		}
	}
}

// endTaskCgroups ends every session cgroup of task and owner's (ownedBy:
// another engine's on this machine is never touched) but keep's ("" keeps
// none): a session of a killed console whose program exec'd with a clean
// environment is still found there.
func endTaskCgroups(owner, task, keep string, grace time.Duration) error {
	base, _ := cgroupBase()
	if base == "" || task == "" {
		return nil
	}
	ents, err := os.ReadDir(base)
	if err != nil {
		return nil
	}
	prefix := cleanMark(task) + "-"
	var errs []error
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		got, rest, ok := parseCgroupName(e.Name())
		if !ok || !strings.HasPrefix(rest, prefix) || !ownedBy(got, cleanMark(owner)) {
			continue
		}
		if !OlderSession(strings.TrimPrefix(rest, prefix), cleanMark(keep)) {
			continue
		}
		errs = append(errs, endCgroup(fmt.Sprintf("stop processes of task %s", task), filepath.Join(base, e.Name()), 0, grace))
	}
	return errors.Join(errs...)
}
