package coord

import (
	"context"
	"sync"
	"time"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// startHook starts the session, at the pane's size, and keeps its handle
// among those started until it is done, so a shutdown stops every agent it
// launched.
type startHook struct {
	start       worker.Starter
	sizes       *paneSizes
	cfg         config.Config
	owner       string
	environ     []string
	sampleEvery time.Duration
	settle      time.Duration
	now         func() time.Time
	reports     chan worker.Report
	stopped     chan struct{}
	started     *sync.Map
}

func (*startHook) name() string { return "start" }

func (h *startHook) prestart(ctx context.Context, req *prestartRequest, resp *prestartResponse) error {
	t, r := req.task, req.run
	cols, rows := h.sizes.start(t.ID, [2]int{h.cfg.Pane.Cols, h.cfg.Pane.Rows})
	w, err := h.start(ctx, worker.Params{
		TaskID: t.ID, SessionID: r.sessionID, Token: r.token, Owner: h.owner, Phase: r.phase, Spec: r.spec,
		Dir: resp.dir, Base: t.BaseCommit, Cols: cols, Rows: rows, History: h.cfg.Pane.History,
		CastPath: req.cast, RecordMax: h.cfg.Limits.RecordingBytes, Environ: h.environ, Brief: resp.brief,
		SampleEvery: h.sampleEvery, StuckAfter: h.cfg.Stuck.After.Duration, Settle: h.settle,
		Changed: repo.Changed, Now: h.now, Reports: h.reports, Gone: h.stopped,
	})
	if err != nil {
		return err
	}
	h.started.Store(w, struct{}{})
	go func() {
		<-w.Done()
		h.started.Delete(w)
	}()
	if resp.brief != "" {
		r.brief = resp.brief // read by the loop only after the preparation returns
	}
	resp.w = w
	return nil
}
