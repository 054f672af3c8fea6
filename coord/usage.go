package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// UsageData is the Data of a session.usage event: what one session
// reported spending, priced when it ended. The store sums these per task and
// phase as they are written (store.UsageList).
type UsageData = store.UsageData

// meter counts one live session's usage records as its follower reads
// them. The follower's goroutine adds; the loop reads.
type meter struct {
	f *usage.Follower
	// atEnd, when set, reads records the agent keeps where they cannot be
	// followed (opencode's database), once, as the session ends.
	atEnd func(context.Context) ([]usage.Record, error)

	// lowerBound says why the meter's totals are a lower bound (its CLI
	// makes requests it records nowhere); "" when they are complete.
	lowerBound string

	mu     sync.Mutex
	totals usage.Totals
}

// total returns a copy of the totals so far.
func (m *meter) total() usage.Totals {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out usage.Totals
	out.Merge(m.totals)
	return out
}

// usageBook is each task's usage: the sums of its ended sessions' usage
// events, with the meters of its live sessions added when read. It lives on
// the loop; what it sees of the coordinator is the loop (loopView), the
// store, the environment and prices sessions run with, and two functions:
// one noting a model that answered, one telling the budget a session's
// spending.
type usageBook struct {
	// byTask is replaced on every change, never modified, so it is shared
	// with snapshots as it is.
	byTask map[task.ID]Usage

	loop    loopView
	st      store.Store
	environ []string
	prices  map[string]config.Price
	// noteModel notes a model that really answered for the task.
	noteModel func(id task.ID, model string)
	// ended tells the budget what a session that ended spent.
	ended func(at time.Time, usd float64, lower bool)
}

// start follows r's usage where its harness reports it, from now on:
// for Claude Code, the transcripts of conversations in r's worktree; for
// Codex and Gemini CLI, their session records of conversations in it; for
// opencode, its database when the session ends. A harness that reports
// nothing gets no meter.
func (b *usageBook) start(ctx context.Context, r *run) *meter {
	if r.dir == "" {
		return nil
	}
	env := session.ScrubEnv(b.environ, r.spec)
	m := &meter{lowerBound: unrecordedBy(r.spec, "")}
	prices := b.prices
	emit := func(rec usage.Record) {
		m.mu.Lock()
		m.totals.Add(rec, prices)
		m.mu.Unlock()
		b.loop.poke() // republish the snapshot with the new figures
	}
	var (
		f   *usage.Follower
		err error
	)
	switch r.spec.Usage {
	case session.UsageClaudeTranscript:
		conf := usage.ClaudeConfigDir(env)
		if conf == "" {
			return nil
		}
		project := usage.ClaudeProjectDir(conf, r.dir)
		f, err = usage.Follow(filepath.Join(conf, "projects"),
			func(path string) bool { return strings.HasPrefix(path, project+string(filepath.Separator)) }, emit)
	case session.UsageCodexRollout:
		home := usage.CodexHome(env)
		if home == "" {
			return nil
		}
		f, err = usage.FollowWith(filepath.Join(home, "sessions"), r.started, nil,
			func(string) usage.LineParser { return usage.CodexRollout(r.dir) }, emit)
	case session.UsageGeminiChat:
		dir := usage.GeminiDir(env)
		if dir == "" {
			return nil
		}
		f, err = usage.FollowWith(filepath.Join(dir, "tmp"), r.started,
			func(path string) bool { return strings.HasSuffix(path, ".jsonl") },
			func(string) usage.LineParser { return usage.GeminiChat(r.dir, r.started) }, emit)
	case session.UsageOpenCodeDB:
		data := usage.OpenCodeDataDir(env)
		if data == "" {
			return nil
		}
		since, dir := r.started, r.dir
		m.atEnd = func(ctx context.Context) ([]usage.Record, error) {
			return usage.OpenCodeRecords(ctx, data, dir, since)
		}
		return m
	default:
		return nil
	}
	if err != nil {
		b.loop.record(ctx, b.loop.event(r.taskID, r.sessionID, task.EvUsage,
			fmt.Sprintf("Session %s: usage will not be counted: %v", short(r.sessionID), err)))
		return nil
	}
	m.f = f
	return m
}

// finish stops r's meter after reading what the agent wrote last,
// writes the session's usage to the ledger and adds it to the task's.
func (b *usageBook) finish(ctx context.Context, r *run) {
	m := r.meter
	if m == nil {
		return
	}
	r.meter = nil
	var err error
	if m.f != nil {
		err = m.f.Close()
	}
	if m.atEnd != nil {
		recs, endErr := m.atEnd(ctx)
		m.mu.Lock()
		for _, rec := range recs {
			m.totals.Add(rec, b.prices)
		}
		m.mu.Unlock()
		err = errors.Join(err, endErr)
	}
	tot := m.total()
	text := fmt.Sprintf("Session %s (phase %s) used %s.", short(r.sessionID), r.phase, tot)
	if err != nil {
		text += " Reading its records: " + err.Error()
	}
	ev := b.loop.event(r.taskID, r.sessionID, task.EvUsage, text)
	if m.lowerBound != "" {
		text += " At least: " + m.lowerBound
	}
	ev.Data, _ = json.Marshal(UsageData{SessionID: r.sessionID, Phase: r.phase, Totals: tot, LowerBound: m.lowerBound})
	b.loop.record(ctx, ev)
	b.add(r.taskID, r.phase, tot, m.lowerBound)
	_, cost := tot.Sum()
	b.ended(ev.At, cost, m.lowerBound != "")
}

// add adds a session's totals to its task's usage and notes the
// models that really answered; lower, when set, says why they are a
// lower bound.
func (b *usageBook) add(id task.ID, p task.Phase, tot usage.Totals, lower string) {
	u := b.byTask[id]
	u = u.plus(p, tot, lower)
	b.byTask[id] = u
	for _, m := range tot.ModelIDs() {
		b.noteModel(id, m)
	}
}

// of is the task's usage with its live session's (r, nil for none) so
// far.
func (b *usageBook) of(id task.ID, r *run) Usage {
	u := b.byTask[id]
	if r != nil && r.meter != nil {
		u = u.plus(r.phase, r.meter.total(), r.meter.lowerBound)
	}
	return u
}

// load sums the task's session.usage events from the ledger, so a
// restarted console shows what was spent before.
func (b *usageBook) load(ctx context.Context, id task.ID) error {
	evs, err := b.st.EventList(ctx, store.EventListParams{TaskID: id})
	if err != nil {
		return fmt.Errorf("load usage of %s: %w", id, err)
	}
	for _, e := range evs {
		if e.Kind != task.EvUsage || len(e.Data) == 0 {
			continue
		}
		var d UsageData
		if json.Unmarshal(e.Data, &d) == nil {
			b.add(id, d.Phase, d.Totals, d.LowerBound)
		}
	}
	return nil
}

// plus returns u with tot added, to the whole and to phase p.
func (u Usage) plus(p task.Phase, tot usage.Totals, lower string) Usage {
	out := u.clone()
	tk, cost := tot.Sum()
	out = out.addTokens(tk, cost)
	if out.Phases == nil {
		out.Phases = map[task.Phase]Usage{}
	}
	pu := out.Phases[p].addTokens(tk, cost)
	if lower != "" {
		out.LowerBound, pu.LowerBound = lower, lower
	}
	out.Phases[p] = pu
	for _, m := range tot.ModelIDs() {
		if !containsString(out.Models, m) {
			out.Models = append(out.Models, m)
		}
	}
	return out
}

func (u Usage) addTokens(tk usage.Tokens, cost float64) Usage {
	u.InputTokens += tk.Input
	u.OutputTokens += tk.Output
	u.CacheCreationTokens += tk.CacheCreation
	u.CacheReadTokens += tk.CacheRead
	u.CostUSD += cost
	return u
}

// clone copies u's map and slice, so a published snapshot never shares
// them with the loop.
func (u Usage) clone() Usage {
	out := u
	out.Models = append([]string(nil), u.Models...)
	if u.Phases != nil {
		out.Phases = make(map[task.Phase]Usage, len(u.Phases))
		for p, pu := range u.Phases {
			out.Phases[p] = pu
		}
	}
	return out
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// unrecorded says, for each CLI whose sessions make requests of their own
// that it writes to none of its records, what those are. Measured against
// the scripted model servers, whose every reply is logged with its tokens
// (the demo's usage proof and e2e TestUsageAddsUp compare the two): the
// one-shot modes `claude -p`, `codex exec` and `gemini -p` recorded every
// request they made; the interactive sessions of every built-in CLI made
// side requests their records do not hold.
var unrecorded = map[session.UsageSource]string{
	// Claude Code 2.1.197 sends a side request at every session start
	// (5,350 of 16,200 input tokens in one run); its transcript holds the
	// conversation's replies only, and no other file of its records it.
	// 2.1.332 sends none (claudeComplete).
	session.UsageClaudeTranscript: "Claude Code before 2.1.332 makes a side request at each session start that its transcripts do not record.",
	// Codex 0.171 asks for a title for each turn (10 of 21 requests in one
	// run, about 5,400 input tokens each); its rollout records the
	// conversation's responses only.
	session.UsageCodexRollout: "Codex's interactive sessions ask for titles in requests its rollout files do not record.",
	// Gemini CLI 0.61 checks its turns with a small model
	// (gemini-3.5-flash-lite, about 500 input tokens a request); its chat
	// file records the main model's replies only.
	session.UsageGeminiChat: "Gemini CLI's interactive sessions check turns with a small model in requests its chat files do not record.",
	// opencode 1.18 asks for the session's title in a request of its own;
	// its database keeps the title, not the request's usage.
	session.UsageOpenCodeDB: "opencode asks for session titles in requests its database does not record.",
}

// claudeComplete is the first Claude Code release measured to record
// every request of an interactive session in its transcript.
var claudeComplete = [3]int{2, 1, 332}

// unrecordedBy says why the usage a session of spec reports is a lower
// bound, "" when its CLI records every request it makes; version is its
// `--version` line ("" when unknown: then the harness's rule holds).
func unrecordedBy(spec session.Spec, version string) string {
	if spec.Delivery != session.DeliveryType && spec.Usage != session.UsageOpenCodeDB {
		// A one-shot mode: measured complete (`opencode run` was not:
		// it titles its session as the interactive one does).
		return ""
	}
	if spec.Usage == session.UsageClaudeTranscript {
		if v, ok := semver(version); ok && !less(v, claudeComplete) {
			return ""
		}
	}
	return unrecorded[spec.Usage]
}

// semver reads the first "X.Y.Z" of a --version line.
func semver(s string) ([3]int, bool) {
	var v [3]int
	for _, f := range strings.Fields(s) {
		parts := strings.SplitN(strings.TrimPrefix(f, "v"), ".", 3)
		if len(parts) != 3 {
			continue
		}
		ok := true
		for i, p := range parts {
			n, err := strconv.Atoi(strings.TrimRightFunc(p, func(r rune) bool { return r < '0' || r > '9' }))
			if err != nil {
				ok = false
				break
			}
			v[i] = n
		}
		if ok {
			return v, true
		}
	}
	return v, false
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
