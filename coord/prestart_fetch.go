package coord

import (
	"context"

	"github.com/orchestra-tui/orchestra-tui/repo"
)

// fetchHook fetches the task's branch from [fleet] remote (travel.go), so
// an attempt starts from what the engine that ran the task before pushed.
type fetchHook struct {
	repo   *repo.Repo
	remote string
}

func (fetchHook) name() string { return "fetch" }

func (h fetchHook) prestart(_ context.Context, req *prestartRequest, resp *prestartResponse) error {
	t, r := req.task, req.run
	from, fetched, note, err := fetchTaskBranch(h.repo, h.remote, t)
	if err != nil {
		return err
	}
	r.fetchNote = note // read by the loop only after the preparation returns
	r.remoteSeen, r.remoteKnown = fetched, note == "" && h.remote != ""
	if from == "" {
		from = t.BaseCommit
	}
	resp.from, resp.fetched = from, fetched
	return nil
}
