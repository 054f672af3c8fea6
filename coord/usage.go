package coord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

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

// startMeter follows r's usage where its harness reports it, from now on:
// for Claude Code, the transcripts of conversations in r's worktree; for
// Codex and Gemini CLI, their session records of conversations in it; for
// opencode, its database when the session ends. A harness that reports
// nothing gets no meter.
func (c *Coordinator) startMeter(ctx context.Context, r *run) *meter {
	if r.dir == "" {
		return nil
	}
	env := session.ScrubEnv(c.p.Environ, r.spec)
	m := &meter{}
	prices := c.cfg.Prices
	emit := func(rec usage.Record) {
		m.mu.Lock()
		m.totals.Add(rec, prices)
		m.mu.Unlock()
		c.poke() // republish the snapshot with the new figures
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
		c.record(ctx, c.event(r.taskID, r.sessionID, task.EvUsage,
			fmt.Sprintf("Session %s: usage will not be counted: %v", short(r.sessionID), err)))
		return nil
	}
	m.f = f
	return m
}

// finishUsage stops r's meter after reading what the agent wrote last,
// writes the session's usage to the ledger and adds it to the task's.
func (c *Coordinator) finishUsage(ctx context.Context, r *run) {
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
			m.totals.Add(rec, c.cfg.Prices)
		}
		m.mu.Unlock()
		err = errors.Join(err, endErr)
	}
	tot := m.total()
	text := fmt.Sprintf("Session %s (phase %s) used %s.", short(r.sessionID), r.phase, tot)
	if err != nil {
		text += " Reading its records: " + err.Error()
	}
	ev := c.event(r.taskID, r.sessionID, task.EvUsage, text)
	ev.Data, _ = json.Marshal(UsageData{SessionID: r.sessionID, Phase: r.phase, Totals: tot})
	c.record(ctx, ev)
	c.addUsage(r.taskID, r.phase, tot)
}

// addUsage adds a session's totals to its task's usage and notes the
// models that really answered.
func (c *Coordinator) addUsage(id task.ID, p task.Phase, tot usage.Totals) {
	u := c.usage[id]
	u = u.plus(p, tot)
	c.usage[id] = u
	for _, m := range tot.ModelIDs() {
		c.noteModel(id, m)
	}
}

// taskUsage is the task's usage with its live session's so far. The value
// in c.usage is replaced on every change, never modified, so it is shared
// with snapshots as it is.
func (c *Coordinator) taskUsage(id task.ID) Usage {
	u := c.usage[id]
	if r := c.runs[id]; r != nil && r.meter != nil {
		u = u.plus(r.phase, r.meter.total())
	}
	return u
}

// loadUsage sums the task's session.usage events from the ledger, so a
// restarted console shows what was spent before.
func (c *Coordinator) loadUsage(ctx context.Context, id task.ID) error {
	evs, err := c.st.EventList(ctx, store.EventListParams{TaskID: id})
	if err != nil {
		return fmt.Errorf("load usage of %s: %w", id, err)
	}
	for _, e := range evs {
		if e.Kind != task.EvUsage || len(e.Data) == 0 {
			continue
		}
		var d UsageData
		if json.Unmarshal(e.Data, &d) == nil {
			c.addUsage(id, d.Phase, d.Totals)
		}
	}
	return nil
}

// plus returns u with tot added, to the whole and to phase p.
func (u Usage) plus(p task.Phase, tot usage.Totals) Usage {
	out := u.clone()
	tk, cost := tot.Sum()
	out = out.addTokens(tk, cost)
	if out.Phases == nil {
		out.Phases = map[task.Phase]Usage{}
	}
	out.Phases[p] = out.Phases[p].addTokens(tk, cost)
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
