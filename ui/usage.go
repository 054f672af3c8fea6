package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/fork"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// usageLine is a task's or a session's spending in a few words: the models
// that answered, the tokens in all four columns, and the cost. Empty when
// nothing was reported, so a screen without usage is unchanged.
func usageLine(models []string, tk usage.Tokens, cost float64) string {
	if tk.IsZero() && cost == 0 {
		return ""
	}
	parts := []string{fmt.Sprintf("$%.4f", cost)}
	if len(models) > 0 {
		parts = append(parts, strings.Join(models, "+"))
	}
	parts = append(parts, fmt.Sprintf("%s in %s out %s cw %s cr", count(tk.Input), count(tk.Output), count(tk.CacheCreation), count(tk.CacheRead)))
	return strings.Join(parts, " · ")
}

// totalsLine is a session's usage from its ledger totals; a model without
// a configured price shows as such rather than as free.
func totalsLine(t usage.Totals) string {
	tk, cost := t.Sum()
	line := usageLine(t.ModelIDs(), tk, cost)
	for _, m := range t.Models {
		if !m.Priced && line != "" {
			return strings.Replace(line, fmt.Sprintf("$%.4f", cost), "no price", 1)
		}
	}
	return line
}

// taskUsageLine is the usage of a task from its snapshot view; a lower
// bound (a CLI that records some requests nowhere) reads "≥$…".
func taskUsageLine(u coord.Usage) string {
	return atLeast(usageLine(u.Models, usage.Tokens{Input: u.InputTokens, Output: u.OutputTokens,
		CacheCreation: u.CacheCreationTokens, CacheRead: u.CacheReadTokens}, u.CostUSD), u.LowerBound)
}

// atLeast marks a usage line as a lower bound when lower says why.
func atLeast(line, lower string) string {
	if line == "" || lower == "" {
		return line
	}
	return "≥" + line
}

// count renders a token count compactly: 950, 12.3k, 4.1M.
func count(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
}

// baseCount is how many lines task id's trained bases take in the lease
// strip: one each, at most two; none leaves the layout as it was.
func baseCount(bases []coord.BaseView, id task.ID) int {
	n := 0
	for _, b := range bases {
		if b.TaskID == id {
			n++
		}
	}
	return min(n, 2)
}

// withBases is the lease strip's lines with one line per trained base of
// the task below them, in maxLines lines.
func (sv stripView) withBases(tv coord.TaskView, lease []string, w, maxLines int) []string {
	bases := sv.baseParts(tv)
	n := min(len(bases), maxLines-1, 2)
	if n <= 0 {
		return block(lease, w, maxLines)
	}
	lease = block(lease, w, maxLines-n)
	for _, b := range bases[:n] {
		lease = append(lease, fit(b, w))
	}
	return lease
}

// baseParts are the trained bases of the task, one line each, with their
// cache clocks moved forward from the snapshot's instant like the lease's,
// and the policy's next action.
func (sv stripView) baseParts(tv coord.TaskView) []string {
	var out []string
	elapsed := time.Duration(0)
	if !sv.snapAt.IsZero() {
		elapsed = max(sv.now.Sub(sv.snapAt), 0)
	}
	for _, b := range sv.bases {
		if b.TaskID != tv.Task.ID {
			continue
		}
		left := b.ExpiresIn - elapsed
		cache := "cache " + clock(left) + " left"
		if left <= 0 {
			cache = sv.st.warn.Render("cache expired")
		}
		next := string(b.Next.Action)
		if !b.Next.Due.IsZero() && b.Next.Action != fork.ActionWait {
			next += " at " + b.Next.Due.In(sv.now.Location()).Format("15:04:05")
		}
		out = append(out, strings.Join([]string{fmt.Sprintf("base %s", shortID(b.ID)), cache,
			"last hit " + ago(sv.now.Sub(b.LastHit)) + " ago",
			plural(b.Forks, "fork", "forks"), "next " + next}, " · "))
	}
	return out
}

// sessionsContent lists the task's sessions above its events: each with
// its phase and attempt, launch fingerprint (and the earlier session it
// matches), the model and what it spent, then the bases and forks the
// ledger's usage events name. Nothing when the task has no sessions and no
// usage.
func (dt *detailTabs) sessionsContent(w int) []string {
	spent := map[string]fork.UsageData{}
	var extra []fork.UsageData // bases and forks: conversations without a pane session
	known := map[string]bool{}
	for _, s := range dt.detail.Sessions {
		known[s.ID] = true
	}
	for _, d := range dt.usageData() {
		if known[d.SessionID] {
			spent[d.SessionID] = d
		} else {
			extra = append(extra, d)
		}
	}
	if len(dt.detail.Sessions) == 0 && len(extra) == 0 {
		return nil
	}
	var out []string
	out = append(out, dt.st.heading.Render(fit("SESSIONS", w)))
	firstOf := map[string]string{} // fingerprint hash -> first session with it
	for _, s := range dt.detail.Sessions {
		l, _ := session.ParseLaunch(s.Fingerprint)
		// Pane sessions have ULIDs, whose tail tells them apart (as in the
		// ledger's sentences); conversations are UUIDs, shown by their head.
		parts := []string{fmt.Sprintf("%s %s #%d", task.ID(s.ID).Short(), s.Phase, s.Attempt)}
		if l.Hash != "" {
			fp := "launch " + l.Short()
			if first, ok := firstOf[l.Hash]; ok {
				fp += " = " + task.ID(first).Short()
			} else {
				firstOf[l.Hash] = s.ID
			}
			parts = append(parts, fp)
		}
		if u := atLeast(totalsLine(spent[s.ID].Totals), spent[s.ID].LowerBound); u != "" {
			parts = append(parts, u)
		} else {
			if s.Model != "" {
				parts = append(parts, s.Model+" (asked)")
			}
			// An ended session whose agent recorded nothing the console
			// reads: say so, never show it as free.
			if !s.EndedAt.IsZero() {
				parts = append(parts, "usage not reported")
			}
		}
		out = append(out, wrapIndented(strings.Join(parts, " · "), w)...)
	}
	for _, d := range extra {
		what := d.Role + " " + shortID(d.SessionID)
		if d.Role == fork.RoleFork {
			what += " of base " + shortID(d.BaseID)
			if d.Hit {
				what += " (cache hit)"
			}
		}
		line := what + " " + string(d.Phase) + " · " + totalsLine(d.Totals)
		if d.Delta != nil {
			_, own := d.Delta.Own.Sum()
			line += fmt.Sprintf(" · block $%.4f beyond the base", own)
		}
		out = append(out, wrapIndented(line, w)...)
	}
	return append(out, "")
}

// wrapIndented wraps s to w, continuation lines indented by two.
func wrapIndented(s string, w int) []string {
	lines := wrap(s, w)
	if len(lines) <= 1 {
		return lines
	}
	out := lines[:1]
	for _, part := range wrap(strings.Join(lines[1:], " "), max(w-2, 1)) {
		out = append(out, "  "+part)
	}
	return out
}

// shortID abbreviates an agent's conversation id (a UUID) to its first
// eight characters, as package fork's ledger sentences do.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
