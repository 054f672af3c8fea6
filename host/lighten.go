package host

import (
	"bytes"
	"debug/elf"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/orchestra-tui/orchestra-tui/session"
)

// A session host is most of the time an idle process holding a screen and
// its history, one per agent: what it keeps beyond them is paid eight
// times on a machine with eight agents. bench/memory.sh measures it.

// hostGCPercent is the host's GOGC: a host's live heap is a screen, its
// history and a few buffers, so collecting when it has grown by a quarter
// (not doubled) keeps its private memory near that, at a cost in CPU only
// for an agent that floods its terminal. GOGC in the environment wins.
const hostGCPercent = 25

// lighten sets the host's GOGC and has it run Go code on one processor
// (GOMAXPROCS in the environment wins): a host's work, its agent's
// output through the emulator, is one stream, and each processor holds
// a cache of partly used spans and stacks of its own.
func lighten() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(hostGCPercent)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// trimQuiet is how long a session must go without output or requests
// before its host hands back what the work took.
const trimQuiet = time.Second

// trim hands back to the kernel what an idle host holds for no screen:
// the session's queue buffers, the heap's free pages (a flood leaves the
// heap at its high-water mark, and the runtime's scavenger returns it
// only slowly), and its mappings of the binary's code and read-only data.
func trim(s *session.Session) {
	s.Trim()
	debug.FreeOSMemory()
	DropCode()
}

// DropCode unmaps the pages of the binary's read-only segments (code,
// read-only data, the function tables) that this process touched. The
// one binary is every process of the tool, so each process's start runs
// every package's init and maps some 14 MB of it, of which an idle host
// uses a few hundred kB (the engine too keeps using only a part); the
// pages stay in the page cache, shared, and what the process runs next
// faults back in from there. Only private file mappings that are not
// writable are dropped: their pages are the file's own (nothing writes
// there), so MADV_DONTNEED loses nothing. A RELRO segment is the
// exception: the dynamic linker wrote it before making it read-only, so
// its pages are this process's own and are never dropped (a binary whose
// segments cannot be read drops nothing).
func DropCode() {
	relro, ok := relroRanges()
	if !ok {
		return
	}
	var st syscall.Stat_t
	if syscall.Stat("/proc/self/exe", &st) != nil {
		return
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	ino := []byte(strconv.FormatUint(st.Ino, 10))
	for line := range bytes.SplitSeq(maps, []byte("\n")) {
		// start-end perms offset dev inode path
		f := bytes.Fields(line)
		if len(f) < 6 || !bytes.Equal(f[4], ino) || (string(f[1]) != "r-xp" && string(f[1]) != "r--p") {
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		off, err3 := strconv.ParseUint(string(f[2]), 16, 64)
		if err1 != nil || err2 != nil || err3 != nil || end <= start || overlaps(relro, off, off+(end-start)) {
			continue
		}
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED)
	}
}

// relroRanges are the file ranges of the binary's PT_GNU_RELRO segments,
// read once.
var relroRanges = sync.OnceValues(func() ([][2]uint64, bool) {
	f, err := elf.Open("/proc/self/exe")
	if err != nil {
		return nil, false
	}
	defer f.Close()
	var out [][2]uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_GNU_RELRO {
			out = append(out, [2]uint64{p.Off, p.Off + p.Filesz})
		}
	}
	return out, true
})

// overlaps reports whether [lo, hi) meets one of rs.
func overlaps(rs [][2]uint64, lo, hi uint64) bool {
	for _, r := range rs {
		if lo < r[1] && r[0] < hi {
			return true
		}
	}
	return false
}

// TrimWhenQuiet calls trim once after each stretch of activity (calls of
// active) that quiet follows, on a goroutine of its own, until stop is
// called: what the host does for its session, for another process of the
// binary (the console) whose work comes in bursts.
func TrimWhenQuiet(quiet time.Duration, trim func()) (active func(), stop func()) {
	t := newTrimmer()
	done := make(chan struct{})
	var once sync.Once
	go t.run(quiet, trim, done)
	return t.active, func() { once.Do(func() { close(done) }) }
}

// Lighten hands back what a process of the binary holds for work it has
// stopped doing: the heap's free pages and the pages of the binary it
// touched (DropCode), which what it runs next faults back in from the
// page cache.
func Lighten() {
	debug.FreeOSMemory()
	DropCode()
}

// trimmer calls a trim once after each stretch of activity, when the
// session has been quiet for a while: never while it works, never twice
// for one quiet stretch.
type trimmer struct {
	poke chan struct{}
}

func newTrimmer() *trimmer { return &trimmer{poke: make(chan struct{}, 1)} }

// active notes activity (output, a request): the next trim waits for
// quiet after it.
func (t *trimmer) active() {
	select {
	case t.poke <- struct{}{}:
	default:
	}
}

// run calls trim each time quiet passes without activity after some,
// until done is closed.
func (t *trimmer) run(quiet time.Duration, trim func(), done <-chan struct{}) {
	for {
		select {
		case <-t.poke:
		case <-done:
			return
		}
		timer := time.NewTimer(quiet)
	wait:
		for {
			select {
			case <-t.poke:
				timer.Reset(quiet)
			case <-timer.C:
				break wait
			case <-done:
				timer.Stop()
				return
			}
		}
		trim()
	}
}
