package coord

import (
	"context"

	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
)

// briefHook renders the brief of a harness that takes it as an argument or
// a file, before its session starts (one typed in is rendered once the
// session is confirmed, report.go).
type briefHook struct {
	st     store.Store
	repo   *repo.Repo
	budget int
}

func (briefHook) name() string { return "brief" }

func (h briefHook) prestart(ctx context.Context, req *prestartRequest, resp *prestartResponse) error {
	r := req.run
	if r.spec.Delivery != session.DeliveryArg && r.spec.Delivery != session.DeliveryFile {
		return nil
	}
	brief, _, err := renderBrief(ctx, h.st, h.repo.Rules(), h.budget, req.task, r, resp.dir)
	if err != nil {
		return err
	}
	resp.brief = brief
	return nil
}
