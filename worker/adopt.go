package worker

import (
	"context"
	"time"
)

// Adopted is what the store knows of a session an earlier engine started.
type Adopted struct {
	// LaunchedAt is when the session started: an artifact older than it
	// is not its own.
	LaunchedAt time.Time
	// Brief is the brief it was given, for a resubmit that re-sends it.
	Brief string
}

// Adopt takes up a live session that an earlier engine launched, confirmed
// and briefed (a session host's agent, after that engine died): the input
// queue, the sentinel watch, the sampler and the exit's reading run on it
// as on a session this run launched. Nothing in the worktree is cleared
// and no process is fenced: the session is the one at work there. An
// agent that exited while no engine watched is read as an exit at once,
// with what it left behind deciding what the exit means.
func Adopt(ctx context.Context, p Params, sess Session, a Adopted) (*Run, error) {
	wt, volatile, err := openWorktree(&p)
	if err != nil {
		return nil, err
	}
	changes, unwatch, err := watchState(p, wt)
	if err != nil {
		return nil, err
	}
	r := newRun(ctx, p, wt, sess, volatile, a.LaunchedAt)
	// Confirmed and briefed already: corrections go straight in, and the
	// stuck clock runs from the adoption.
	r.briefedAt.Store(p.Now().UnixNano())
	r.in.briefed = true
	r.in.lastText = a.Brief
	r.begin(false, changes, unwatch)
	return r, nil
}
