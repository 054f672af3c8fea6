package coord

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
)

// LastScreen is the final screen of a task's last session, replayed from
// its recording: what the agent's terminal showed when it ended, for a
// task that has no live session any more.
type LastScreen struct {
	SessionID  string
	Status     store.SessionStatus
	ExitCode   int
	Cols, Rows int
	// Screen is the screen with its styles as ANSI text, one line per row.
	Screen string
	// Damaged says why the recording could not be read to its end (its
	// writer was killed mid-line); the screen is the one up to there.
	Damaged string `json:",omitempty"`
}

// keptScreens is how many replayed last screens a coordinator keeps; a
// console asks again for the same few selected tasks.
const keptScreens = 16

// lastScreens caches replayed screens by session and recording size, so a
// recording is replayed once however often its task is selected.
type lastScreens struct {
	mu sync.Mutex
	m  map[string]lastScreenEntry
}

type lastScreenEntry struct {
	size int64
	ls   *LastScreen
}

// lastScreen returns the final screen of the last of sessions, whose
// recordings are under root, nil when that session is still live, recorded
// nothing, or its recording is not on this machine (another engine of a
// shared store ran it).
func (cache *lastScreens) lastScreen(root string, sessions []store.Session) *LastScreen {
	if len(sessions) == 0 {
		return nil
	}
	s := sessions[len(sessions)-1]
	if s.Status == store.SessionLaunching || s.Status == store.SessionConfirmed || s.CastPath == "" {
		return nil
	}
	if !filepath.IsLocal(s.CastPath) {
		return nil // the store names a path outside the repository
	}
	f, err := os.Open(filepath.Join(root, s.CastPath))
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	cache.mu.Lock()
	e, ok := cache.m[s.ID]
	cache.mu.Unlock()
	if ok && e.size == fi.Size() {
		return e.ls
	}
	v, err := session.ReplayCast(f)
	if v == nil {
		return nil
	}
	ls := &LastScreen{SessionID: s.ID, Status: s.Status, ExitCode: s.ExitCode, Screen: v.Render()}
	ls.Cols, ls.Rows = v.Size()
	if err != nil {
		ls.Damaged = fmt.Sprint(err)
	}
	cache.mu.Lock()
	if cache.m == nil || len(cache.m) >= keptScreens {
		cache.m = make(map[string]lastScreenEntry, keptScreens)
	}
	cache.m[s.ID] = lastScreenEntry{size: fi.Size(), ls: ls}
	cache.mu.Unlock()
	return ls
}
