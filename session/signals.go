package session

import (
	"os"
	ossignal "os/signal"
	"sync"
	"syscall"
)

// defaultSignalsOnce guards restoreChildSignals.
var defaultSignalsOnce sync.Once

// restoreChildSignals makes sure every agent starts with SIGHUP and SIGINT
// at their default action, whatever this process inherited.
//
// A process started with a signal ignored (by nohup, or as a background
// job of a non-interactive shell, which ignores SIGINT and SIGQUIT) passes
// the ignore on through exec, and Go leaves an inherited ignore of SIGHUP
// and SIGINT in place. An agent started under such an engine or host
// would ignore the hangup Stop sends first, and an interactive shell,
// which ignores SIGTERM as well, would then wait out the whole grace to
// be killed; ^C typed into its pane would do nothing. Go resets the
// signals it handles to their default in a forked child, so a handler
// here, whose signals are dropped, keeps this process ignoring them as
// it did while its children start with the default.
func restoreChildSignals() {
	defaultSignalsOnce.Do(func() {
		var ignored []os.Signal
		for _, sig := range []os.Signal{syscall.SIGHUP, syscall.SIGINT} {
			if ossignal.Ignored(sig) {
				ignored = append(ignored, sig)
			}
		}
		if len(ignored) == 0 {
			return
		}
		c := make(chan os.Signal, 1)
		ossignal.Notify(c, ignored...)
		go func() {
			for range c { // ignored, as this process was started to do
			}
		}()
	})
}
