package fork

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// Registry trains bases, starts forks of them and keeps the record of both
// in the store: the bases table, and the task's ledger.
type Registry struct {
	st     store.Store
	policy Policy
	now    func() time.Time
	// OnChange, if set, is called after a base was stored or changed, so
	// a console can refresh what it shows.
	OnChange func()
	// OnEvent, if set, is called with each ledger event the registry has
	// written (usage of a training or a fork, a refused fork), after the
	// write, so a console tells its subscribers and counts the usage at
	// once instead of at its next start.
	OnEvent func(task.Event)
}

// NewRegistry returns a registry on st; now is the clock (nil: time.Now).
func NewRegistry(st store.Store, p Policy, now func() time.Time) *Registry {
	if now == nil {
		now = time.Now
	}
	return &Registry{st: st, policy: p, now: now}
}

// Policy returns the policy the registry decides with.
func (r *Registry) Policy() Policy { return r.policy }

// UsageData is the Data of the session.usage event a base's training or a
// fork writes to its task's ledger. Its first three fields are the
// coordinator's per-session usage data (coord.UsageData), so the task's
// usage counts bases and forks with its sessions; the rest say which base
// and what a fork cost beyond it.
type UsageData struct {
	SessionID string       `json:"session_id"`
	Phase     task.Phase   `json:"phase"`
	Totals    usage.Totals `json:"totals"`
	// LowerBound is coord.UsageData's: set, the totals are at least these.
	LowerBound string `json:"lower_bound,omitempty"`
	BaseID     string `json:"base_id"`
	// Role is RoleBase for a training run, RoleFork for a fork.
	Role string `json:"role"`
	// Hit reports whether the fork read the cache.
	Hit   bool   `json:"hit,omitempty"`
	Delta *Delta `json:"delta,omitempty"`
	// Ping marks a keep-warm ping: a fork that did no block's work.
	Ping bool `json:"ping,omitempty"`
}

// Roles of a usage event.
const (
	RoleBase = "base"
	RoleFork = "fork"
)

// ContinuePrompt is the short brief a fork starts from: the base already
// holds the background, so it names only the next block.
func ContinuePrompt(block string) string {
	return "You are continuing the task you were briefed on above, from where that briefing left off. " +
		"Do not repeat the background. Next: " + strings.TrimSpace(block)
}

// pingPrompt is a keep-warm ping's whole brief: one short answer, which
// reads the base from the cache and so renews it.
const pingPrompt = "Keep-warm ping from the console: reply with the single word OK and do nothing else."

// Train runs the agent once on brief and records the conversation as a
// base of run.TaskID, with its launch fingerprint and what training cost.
func (r *Registry) Train(ctx context.Context, run Run, brief string) (Base, error) {
	l, err := session.NewLaunch(ctx, run.params(), run.Model)
	if err != nil {
		return Base{}, fmt.Errorf("train a base for %s: %w", run.TaskID, err)
	}
	o, err := execPrint(ctx, run, l, nil, brief, nil, r.policy.Prices)
	if err != nil {
		return Base{}, fmt.Errorf("train a base for %s: %w", run.TaskID, err)
	}
	now := r.now()
	b := Base{
		ID: o.sessionID, TaskID: run.TaskID, Harness: run.Spec.Name, Model: mainModel(o.totals),
		Launch: l, Training: o.totals, CreatedAt: now, LastHitAt: now, LastUsedAt: now,
	}
	ev := r.event(run.TaskID, b.ID, task.EvUsage,
		fmt.Sprintf("Base %s trained for phase %s (launch %s): %s.", short(b.ID), run.Phase, l.Short(), o.totals),
		UsageData{SessionID: b.ID, Phase: run.Phase, Totals: o.totals, BaseID: b.ID, Role: RoleBase})
	if err := r.st.BaseInsert(ctx, b.Row(), ev); err != nil {
		return Base{}, fmt.Errorf("record base %s of %s: %w", short(b.ID), run.TaskID, err)
	}
	r.changed(ev)
	return b, nil
}

// ForkResult is what one fork did and cost.
type ForkResult struct {
	// SessionID is the fork's own conversation id.
	SessionID string
	BaseID    string
	// Text is the agent's final answer.
	Text string
	// Totals are the fork's own replies, priced: what this block paid.
	Totals usage.Totals
	// Hit reports whether it read the base from the cache.
	Hit   bool
	Delta Delta
	// Base is the base after the fork: a hit moves its cache clock.
	Base Base
}

// Fork resumes base baseID as a new conversation with prompt. The fork must
// be launched exactly as the base was: when run's fingerprint differs, it
// is refused before anything runs, with a refusal event naming the fields,
// and the error is a *task.Refusal with task.ReasonForkFingerprint.
func (r *Registry) Fork(ctx context.Context, baseID string, run Run, prompt string) (ForkResult, error) {
	return r.fork(ctx, baseID, run, prompt, false)
}

func (r *Registry) fork(ctx context.Context, baseID string, run Run, prompt string, ping bool) (ForkResult, error) {
	b, err := r.Get(ctx, baseID)
	if err != nil {
		return ForkResult{}, err
	}
	if !b.RetiredAt.IsZero() {
		return ForkResult{}, fmt.Errorf("fork base %s: it was retired at %s; fork a newer base", short(b.ID), clock(b.RetiredAt))
	}
	l, err := session.NewLaunch(ctx, run.params(), run.Model)
	if err != nil {
		return ForkResult{}, fmt.Errorf("fork base %s: %w", short(b.ID), err)
	}
	if l.Hash != b.Launch.Hash {
		diff := Diff(b.Launch, l)
		ref := task.Refuse(task.ReasonForkFingerprint, "Base %s, fork launch %s: %s.", short(b.ID), l.Short(), strings.Join(diff, "; "))
		ev := r.event(b.TaskID, "", task.EvRefusal, ref.Error(), map[string]any{"base_id": b.ID, "differs": diff})
		ev.Reason = task.ReasonForkFingerprint
		if err := r.st.EventAppend(ctx, ev); err != nil {
			return ForkResult{}, errors.Join(ref, fmt.Errorf("record the refusal: %w", err))
		}
		r.emit(ev)
		return ForkResult{}, ref
	}
	baseRecs, err := transcript(run.env(), run.Dir, b.ID)
	if err != nil {
		return ForkResult{}, fmt.Errorf("fork base %s: the agent keeps the base's conversation in its config directory, and it is not there: %w", short(b.ID), err)
	}
	exclude := map[string]bool{}
	for _, rec := range baseRecs {
		exclude[rec.MessageID] = true
	}
	o, err := execPrint(ctx, run, l, []string{"--resume", b.ID, "--fork-session"}, prompt, exclude, r.policy.Prices)
	if err != nil {
		return ForkResult{}, fmt.Errorf("fork base %s: %w", short(b.ID), err)
	}
	res := ForkResult{SessionID: o.sessionID, BaseID: b.ID, Text: o.text, Totals: o.totals,
		Delta: delta(b, o.records, r.policy.Prices)}
	tk, _ := o.totals.Sum()
	res.Hit = tk.CacheRead > 0
	b.Forks++
	if res.Hit {
		b.LastHitAt = r.now() // a read of the cache restarts its clock
	}
	if !ping {
		b.LastUsedAt = r.now() // a ping keeps the cache, it is not a use
	}
	res.Base = b
	ev := r.event(b.TaskID, o.sessionID, task.EvUsage, forkText(res, run.Phase),
		UsageData{SessionID: o.sessionID, Phase: run.Phase, Totals: o.totals, BaseID: b.ID, Role: RoleFork, Hit: res.Hit, Delta: &res.Delta, Ping: ping})
	if err := r.st.BaseUpdate(ctx, b.Row(), ev); err != nil {
		return res, fmt.Errorf("record fork %s of base %s: %w", short(o.sessionID), short(b.ID), err)
	}
	r.changed(ev)
	return res, nil
}

// Ping is a keep-warm ping: the smallest fork, which renews the cache.
// Its usage event is marked Ping.
func (r *Registry) Ping(ctx context.Context, baseID string, run Run) (ForkResult, error) {
	return r.fork(ctx, baseID, run, pingPrompt, true)
}

// Retire marks a base as no longer used (replaced by a retrain, or its
// task is done); forks of it are refused from then on.
func (r *Registry) Retire(ctx context.Context, baseID string) error {
	b, err := r.Get(ctx, baseID)
	if err != nil {
		return err
	}
	b.RetiredAt = r.now()
	if err := r.st.BaseUpdate(ctx, b.Row()); err != nil {
		return fmt.Errorf("retire base %s: %w", short(baseID), err)
	}
	r.changed()
	return nil
}

// Get returns one base.
func (r *Registry) Get(ctx context.Context, id string) (Base, error) {
	row, err := r.st.BaseGet(ctx, id)
	if err != nil {
		return Base{}, fmt.Errorf("find base %s: %w", short(id), err)
	}
	return FromRow(row)
}

// List returns a task's bases (every task's for ""), oldest first.
func (r *Registry) List(ctx context.Context, taskID task.ID) ([]Base, error) {
	rows, err := r.st.BaseList(ctx, taskID)
	if err != nil {
		return nil, err
	}
	out := make([]Base, 0, len(rows))
	for _, row := range rows {
		b, err := FromRow(row)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// Decide returns the policy's decision about b now.
func (r *Registry) Decide(b Base) Decision { return Decide(b, r.policy, r.now()) }

// changed tells the console a base changed, then hands it the events
// written with the change.
func (r *Registry) changed(evs ...task.Event) {
	if r.OnChange != nil {
		r.OnChange()
	}
	r.emit(evs...)
}

func (r *Registry) emit(evs ...task.Event) {
	if r.OnEvent == nil {
		return
	}
	for _, ev := range evs {
		r.OnEvent(ev)
	}
}

// event builds a ledger event on taskID with data as its JSON.
func (r *Registry) event(taskID task.ID, sessionID string, kind task.Kind, text string, data any) task.Event {
	// The id is set here, not left to the store, so the event a console
	// publishes is the row the ledger holds.
	now := r.now()
	ev := task.Event{ID: task.NewULID(now), TaskID: taskID, SessionID: sessionID, Kind: kind, Text: text, At: now}
	ev.Data, _ = json.Marshal(data) // plain structs and maps
	return ev
}

// forkText is the ledger sentence of a fork.
func forkText(res ForkResult, phase task.Phase) string {
	hit := "read the base from the cache"
	if !res.Hit {
		hit = "missed the cache (it paid the base's prefix again)"
	}
	d := res.Delta
	return fmt.Sprintf("Fork %s of base %s (phase %s) %s. Block cost beyond the base: %s; plus %d prefix tokens read from cache for $%.4f, against $%.4f to train the base.",
		short(res.SessionID), short(res.BaseID), phase, hit, d.Own, d.PrefixTokens, d.PrefixCostUSD, d.TrainingCostUSD)
}

// mainModel is the model that did most of the work: the CLI's side
// requests (titles, quota probes) may go to a smaller one.
func mainModel(t usage.Totals) string {
	best, most := "", int64(-1)
	for _, m := range t.ModelIDs() {
		tk := t.Models[m].Tokens
		if n := tk.Input + tk.CacheCreation + tk.CacheRead + tk.Output; n > most {
			best, most = m, n
		}
	}
	return best
}

// short abbreviates a conversation id for a sentence.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
