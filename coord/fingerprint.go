package coord

import (
	"context"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// launchPrint is a session's launch fingerprint as the launch computed it,
// with the task's earlier session that had the same one, if any.
type launchPrint struct {
	launch session.Launch
	same   string // id of the latest earlier session with the same hash
	err    error
}

// fingerprint computes r's launch fingerprint off the loop (it may run the
// agent's --version once per binary) and looks for an earlier session of
// the task that was launched the same way (in st), with environ the
// console's environment.
func fingerprint(ctx context.Context, st store.Store, environ []string, t task.Task, r *run, dir string, cols, rows int) launchPrint {
	l, err := session.NewLaunch(ctx, session.Params{
		Spec: r.spec, Dir: dir, Cols: cols, Rows: rows, Environ: environ,
	}, t.Model)
	if err != nil {
		return launchPrint{err: err}
	}
	lp := launchPrint{launch: l}
	ss, err := st.SessionList(ctx, t.ID)
	if err != nil {
		return lp
	}
	for _, s := range ss {
		if s.ID == r.sessionID || s.Fingerprint == "" {
			continue
		}
		if old, err := session.ParseLaunch(s.Fingerprint); err == nil && old.Hash == l.Hash {
			lp.same = s.ID
		}
	}
	return lp
}

// note is the fingerprint's part of the session.launched sentence.
func (lp launchPrint) note() string {
	switch {
	case lp.err != nil:
		return "; no launch fingerprint: " + lp.err.Error()
	case lp.launch.Hash == "":
		return ""
	case lp.same != "":
		return fmt.Sprintf("; fingerprint %s, same as session %s", lp.launch.Short(), short(lp.same))
	default:
		return "; fingerprint " + lp.launch.Short()
	}
}

// recordFingerprint stores the fingerprint on the session's row.
func (rp *reporter) recordFingerprint(ctx context.Context, r *run, lp launchPrint) {
	if lp.launch.Hash == "" {
		return
	}
	rp.life.updateSession(ctx, r, func(s *store.Session) { s.Fingerprint = lp.launch.JSON() })
}
