package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/forge"
	"github.com/orchestra-tui/orchestra-tui/forge/forges"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Pull requests ([finalise] pr): approving a task pushes its branch and
// opens a pull request on the [source] forge, and the task waits in
// pr-open while the team reviews it there. The loop polls each open pull
// request off the loop, with backoff, and applies what it finds on it:
// checks and reviews go into the task's row (and a pr.updated event when
// they change), a merge lands the task (merged), a "changes requested"
// review on the head commit sends it back to implement with no attempt
// charged (the path of the Diff tab's C), and a pull request closed
// unmerged puts the task back to awaiting review. What the row shows is
// the Data of the task's latest pr.* event, so a restarted engine reads it
// back from the ledger.

// Poll intervals: the first look soon after opening, then slower while
// nothing changes, back to the fastest on a change.
const (
	pullPollMin = 2 * time.Second
	pullPollMax = time.Minute
	// pullFailMax bounds the backoff after the forge failed to answer.
	pullFailMax = 5 * time.Minute
)

// pullRequests is the open pull requests: their state on the loop, and
// what it sees of the coordinator: the loop (loopView), the task map
// (tasksView), the store, the repository and configuration, the tasks'
// verdicts, and the Diff tab's "request changes", which a review asking
// for changes takes.
type pullRequests struct {
	f       forge.Forge // opened on first use, off the loop
	views   map[task.ID]*task.PullData
	loading map[task.ID]bool // the view is read back from the ledger
	busy    map[task.ID]bool // a poll is under way
	next    map[task.ID]time.Time
	every   map[task.ID]time.Duration
	// min and max are the poll intervals (tests shorten them).
	min, max time.Duration

	loop  loopView
	tasks tasksView
	st    store.Store
	repo  *repo.Repo
	cfg   config.Config
	// verdict is the task's latest verify verdict, nil for none; on the
	// loop.
	verdict func(task.ID) *task.Verdict
	// requestChanges sends the task back to implement with the reviewers'
	// answer (review.go).
	requestChanges func(ctx context.Context, t task.Task, cmd Command) cmdReply
}

func (p *pullRequests) init() {
	if p.views == nil {
		p.views, p.loading, p.busy = map[task.ID]*task.PullData{}, map[task.ID]bool{}, map[task.ID]bool{}
		p.next, p.every = map[task.ID]time.Time{}, map[task.ID]time.Duration{}
	}
	if p.min <= 0 {
		p.min, p.max = pullPollMin, pullPollMax
	}
}

// openForge opens the [source] forge with its token; the token stays in
// the client. It runs off the loop.
func openForge(ctx context.Context, src config.Source) (forge.Forge, error) {
	tok, err := src.Token(ctx)
	if err != nil {
		return nil, err
	}
	return forges.Open(src.ForgeConfig(tok))
}

// issueOf is the number of the forge issue a task came from, or 0: the
// first event of the task whose Data carries {"issue": N} (the issue
// poller records it with the task).
func issueOf(evs []task.Event) int {
	for _, e := range evs {
		if len(e.Data) == 0 {
			continue
		}
		var d struct {
			Issue int `json:"issue"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.Issue > 0 {
			return d.Issue
		}
	}
	return 0
}

// PullBody is the body of a task's pull request: the goal and acceptance,
// the human decisions, the verdict with its test counts, the attempts, and
// "Closes #N" for a task that came from issue N.
func PullBody(t task.Task, v *task.Verdict, decisions []store.Decision, evs []task.Event, issue int) string {
	var b strings.Builder
	if issue > 0 {
		fmt.Fprintf(&b, "Closes #%d\n\n", issue)
	}
	fmt.Fprintf(&b, "## Goal\n\n%s\n", strings.TrimSpace(task.PlainText(t.Goal)))
	if len(t.Acceptance) > 0 {
		b.WriteString("\n## Acceptance\n\n")
		for _, a := range t.Acceptance {
			fmt.Fprintf(&b, "- %s\n", oneLine(task.PlainText(a)))
		}
	}
	b.WriteString("\n## Decisions\n\n")
	if len(decisions) == 0 {
		b.WriteString("No human corrections.\n")
	}
	for _, d := range decisions {
		where := ""
		if d.Anchor != nil {
			where = " on " + d.Anchor.Where()
		}
		state := ""
		if !d.ResolvedAt.IsZero() {
			state = " (resolved)"
		}
		fmt.Fprintf(&b, "- %s, by %s%s%s: %s\n", d.At.UTC().Format("2006-01-02 15:04"), d.Author, where, state, oneLine(task.PlainText(d.Text)))
	}
	b.WriteString("\n## Verdict\n\n")
	if v == nil {
		fmt.Fprintf(&b, "No verdict recorded (`%s`).\n", t.Verify)
	} else {
		fmt.Fprintf(&b, "%s: `%s`, re-run by orchestra-tui; %d passed, %d failed, %d skipped.\n", v.Line(), t.Verify, v.Passed, v.Failed, v.Skipped)
	}
	b.WriteString("\n## Attempts\n\n")
	n := 0
	for _, e := range evs {
		switch e.Kind {
		case task.EvSessionLaunched, task.EvDeadEnd, task.EvVerifyFinished, task.EvTaskRequeued, task.EvPhaseAdvanced:
			if e.Kind == task.EvSessionLaunched {
				n++
			}
			fmt.Fprintf(&b, "- %s %s\n", e.At.UTC().Format("2006-01-02 15:04"), oneLine(task.PlainText(e.Text)))
		}
	}
	fmt.Fprintf(&b, "\n%s in all.\n", plural(n, "session"))
	out := b.String()
	if len(out) > maxPullBody {
		// GitHub refuses a body over 65536 characters; the ledger has
		// the rest.
		out = strings.ToValidUTF8(out[:maxPullBody], "") + "\n\n… (cut; `orchestra-tui events` has the rest)\n"
	}
	return out + fmt.Sprintf("\norchestra-tui task %s\n", t.ID)
}

// maxPullBody bounds a pull request's body below GitHub's limit.
const maxPullBody = 60000

// pullOutcome is what publishing a task as a pull request came to, off
// the loop.
type pullOutcome struct {
	f    forge.Forge
	pr   forge.PullRequest
	base string
	err  error
}

// approve is approve with [finalise] pr: off the loop the
// branch is pushed and the pull request opened; back on it the task moves
// to pr-open with an event that names the pull request. A failure leaves
// the task awaiting review, with a refusal that says why. The reply goes
// to later (buffered), once.
func (pr *pullRequests) approve(ctx context.Context, id task.ID, cmd Command, info BranchInfo, later chan<- cmdReply) {
	pr.init()
	t := pr.tasks.get(id)
	if t.State != task.StateAwaitingReview {
		later <- cmdReply{err: fmt.Errorf("cannot approve task %s: it is %s, not awaiting review", id.Short(), t.State)}
		return
	}
	if !info.Exists {
		later <- cmdReply{err: fmt.Errorf("cannot open a pull request for task %s: %s", id.Short(), info.Sentence(id))}
		return
	}
	r, cfg, st, f, v := pr.repo, pr.cfg, pr.st, pr.f, pr.verdict(id)
	pr.loop.async(func() func() {
		o := publishPull(ctx, r, cfg, st, f, t, v)
		return func() {
			if o.f != nil {
				pr.f = o.f
			}
			if o.err != nil {
				err := task.Refuse(task.ReasonPushFailed, "%v", o.err)
				pr.loop.record(ctx, pr.loop.refusalFrom(id, err))
				later <- cmdReply{err: fmt.Errorf("task %s stays awaiting review: %w", id.Short(), o.err)}
				return
			}
			d := pullData(o.pr)
			ev := pr.loop.event(id, "", task.EvPullOpened, fmt.Sprintf("Approved by %s. Pushed %s to %s; pull request #%d into %s: %s",
				authorOf(cmd), t.Branch, cfg.Finalise.Remote, d.Number, o.base, d.URL))
			ev.Data, _ = json.Marshal(d)
			if !pr.tasks.move(ctx, id, 0, task.ActOpenPR, nil, ev) {
				later <- cmdReply{err: fmt.Errorf("opened pull request #%d, but task %s is %s now", d.Number, id.Short(), pr.tasks.get(id).State)}
				return
			}
			pr.views[id] = &d
			pr.every[id] = pr.min
			pr.next[id] = pr.loop.now().Add(pr.min)
			later <- cmdReply{res: Result{TaskID: id, Message: fmt.Sprintf("approved; pull request #%d opened: %s", d.Number, d.URL)}}
		}
	})
}

// publishPull pushes t's branch and opens its pull request. It runs git
// and talks to the forge: call it off the loop.
func publishPull(ctx context.Context, r *repo.Repo, cfg config.Config, st store.Store, f forge.Forge, t task.Task, v *task.Verdict) pullOutcome {
	var o pullOutcome
	var err error
	if f == nil {
		if f, err = openForge(ctx, cfg.Source); err != nil {
			o.err = fmt.Errorf("the [source] forge: %w", err)
			return o
		}
	}
	o.f = f
	o.base = strings.TrimSpace(cfg.Finalise.Base)
	if o.base == "" {
		if o.base, err = r.CurrentBranch(); err != nil {
			o.err = fmt.Errorf("no base branch for the pull request: %w, or set [finalise] base", err)
			return o
		}
	}
	if err := r.Push(cfg.Finalise.Remote, t.Branch); err != nil {
		o.err = err
		return o
	}
	evs, err := st.EventList(ctx, store.EventListParams{TaskID: t.ID})
	if err != nil {
		o.err = fmt.Errorf("read the task's events for the pull request's body: %w", err)
		return o
	}
	ds, err := st.DecisionList(ctx, t.ID)
	if err != nil {
		o.err = fmt.Errorf("read the task's decisions for the pull request's body: %w", err)
		return o
	}
	title := oneLine(task.PlainText(t.Title))
	o.pr, o.err = f.OpenPullRequest(ctx, forge.NewPullRequest{Title: title, Body: PullBody(t, v, ds, evs, issueOf(evs)), Head: t.Branch, Base: o.base})
	return o
}

func pullData(p forge.PullRequest) task.PullData {
	return task.PullData{Number: p.Number, URL: p.URL, Open: p.Open, Merged: p.Merged, Checks: p.Checks, Review: p.Review}
}

// tick polls the open pull requests that are due. It runs on the loop.
// A task left in pr-open is followed while a forge is configured, even
// with [finalise] pr turned off since.
func (pr *pullRequests) tick(ctx context.Context) {
	if !pr.cfg.Source.Configured() {
		return
	}
	pr.init()
	now := pr.loop.now()
	for _, id := range pr.tasks.ids() {
		if pr.tasks.get(id).State != task.StatePullOpen || pr.busy[id] || pr.loading[id] {
			continue
		}
		v := pr.views[id]
		if v == nil {
			pr.load(ctx, id)
			continue
		}
		if now.Before(pr.next[id]) {
			continue
		}
		pr.busy[id] = true
		f, src, n := pr.f, pr.cfg.Source, v.Number
		pr.loop.async(func() func() {
			var err error
			if f == nil {
				f, err = openForge(pr.loop.io(), src)
			}
			var p forge.PullRequest
			if err == nil {
				p, err = f.PullRequest(pr.loop.io(), n)
			}
			return func() { pr.polled(ctx, id, f, p, err) }
		})
	}
}

// load reads a pr-open task's pull request back from its latest pr.*
// event (after a restart), off the loop.
func (pr *pullRequests) load(ctx context.Context, id task.ID) {
	pr.loading[id] = true
	st := pr.st
	pr.loop.async(func() func() {
		d, _ := ReadPull(ctx, st, id)
		return func() {
			delete(pr.loading, id)
			if d == nil {
				// Nothing to poll: the task says so once, and waits for
				// the operator.
				pr.loop.record(ctx, pr.loop.refusal(id, "", task.ReasonPushFailed, "This task is pr-open but its ledger names no pull request; cancel it or check the forge."))
				pr.views[id] = &task.PullData{}
				pr.next[id] = pr.loop.now().Add(100 * 365 * 24 * time.Hour)
				return
			}
			pr.views[id] = d
			pr.every[id] = pr.min
			pr.next[id] = pr.loop.now()
			pr.loop.poke()
		}
	})
}

// ReadPull is a task's pull request as its latest pr.* event left it, or
// nil when it has none.
func ReadPull(ctx context.Context, st store.Store, id task.ID) (*task.PullData, error) {
	evs, err := st.EventList(ctx, store.EventListParams{TaskID: id})
	if err != nil {
		return nil, err
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if k := evs[i].Kind; k == task.EvPullOpened || k == task.EvPullUpdated {
			var x task.PullData
			if json.Unmarshal(evs[i].Data, &x) == nil && x.Number > 0 {
				return &x, nil
			}
		}
	}
	return nil, nil
}

// polled applies a poll's answer on the loop.
func (pr *pullRequests) polled(ctx context.Context, id task.ID, f forge.Forge, p forge.PullRequest, err error) {
	delete(pr.busy, id)
	if f != nil && pr.f == nil {
		pr.f = f
	}
	now := pr.loop.now()
	old := pr.views[id]
	if t := pr.tasks.get(id); t.State != task.StatePullOpen || old == nil {
		return
	}
	if err != nil {
		var rl *forge.RateLimitError
		wait := min(max(2*pr.every[id], pr.min), pullFailMax)
		if errors.As(err, &rl) && rl.Reset.After(now) {
			wait = rl.Reset.Sub(now)
		}
		pr.every[id] = wait
		pr.next[id] = now.Add(wait)
		return
	}
	d := pullData(p)
	if d == *old {
		pr.every[id] = min(2*pr.every[id], pr.max)
		pr.next[id] = now.Add(pr.every[id])
		return
	}
	pr.views[id] = &d
	pr.every[id] = pr.min
	pr.next[id] = now.Add(pr.min)
	ev := pr.loop.event(id, "", task.EvPullUpdated, pullSentence(d))
	ev.Data, _ = json.Marshal(d)
	switch {
	case d.Merged:
		pr.loop.record(ctx, ev)
		pr.tasks.move(ctx, id, 0, task.ActLand, nil, pr.loop.event(id, "", task.EvBranchMerged,
			fmt.Sprintf("Pull request #%d was merged on the forge: the task is merged.", d.Number)))
	case !d.Open:
		pr.loop.record(ctx, ev)
		pr.tasks.move(ctx, id, 0, task.ActHold, nil, pr.loop.event(id, "", task.EvTaskAwaiting,
			fmt.Sprintf("Pull request #%d was closed without merging: the task waits for review again.", d.Number)))
	case d.Review == "changes_requested" && old.Review != "changes_requested":
		pr.loop.record(ctx, ev)
		// The reviewers' answer is the work, as the Diff tab's C is.
		_ = pr.requestChanges(ctx, pr.tasks.get(id), Command{Kind: CmdRequestChanges, TaskID: id, Author: fmt.Sprintf("a review of pull request #%d", d.Number)})
	default:
		pr.loop.record(ctx, ev)
	}
}

// pullSentence says what a pull request is now.
func pullSentence(d task.PullData) string {
	s := fmt.Sprintf("Pull request #%d", d.Number)
	switch {
	case d.Merged:
		return s + " is merged."
	case !d.Open:
		return s + " is closed without merging."
	}
	parts := []string{"checks " + orNone(d.Checks)}
	switch d.Review {
	case "changes_requested":
		parts = append(parts, "changes requested")
	case "approved":
		parts = append(parts, "approved")
	}
	return s + " is open: " + strings.Join(parts, ", ") + "."
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// PullLabel is a pull request as a task row shows it: "PR #12 ✓",
// "PR #12 …" (checks running), "PR #12 ✗", "PR #12" (no checks), with
// "changes" when a review asked for them.
func PullLabel(d *task.PullData) string {
	if d == nil || d.Number == 0 {
		return ""
	}
	s := fmt.Sprintf("PR #%d", d.Number)
	switch d.Checks {
	case "success":
		s += " ✓"
	case "failure":
		s += " ✗"
	case "pending":
		s += " …"
	}
	if d.Review == "changes_requested" {
		s += " changes"
	}
	return s
}
