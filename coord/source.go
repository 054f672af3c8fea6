package coord

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/orchestra-tui/orchestra-tui/forge"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// StatusMarker opens the status comment the engine keeps on a task's
// issue; the source never reads a comment carrying it as a correction.
const StatusMarker = "<!-- orchestra-tui status -->"

// SourceConfig says which forge repository feeds tasks and corrections.
type SourceConfig struct {
	Forge forge.Forge
	// Key names the forge and repository ("gitea https://git.example.org
	// team/app"): it goes into the ids derived from issues and comments,
	// so every engine on one store derives the same ones.
	Key string
	// Label marks the issues that become tasks.
	Label string
	// Users may open tasks and correct them; empty means the
	// repository's collaborators with write access.
	Users []string
	// Verify is the verify command of an issue without a verify block.
	Verify string
	// Interval is how often the forge is asked; 0 means a second.
	Interval time.Duration
	// Limit is the largest comment or issue body taken, in bytes; longer
	// ones are cut. 0 means the correction limit's default.
	Limit int
	Log   *slog.Logger
}

// Source turns a forge's labelled issues into tasks and their comments
// into corrections, through the coordinator's own commands: a task is
// added as `add` adds one, a comment is typed into the live pane as a
// console correction is, and a closed issue cancels its task. Engines on
// one store agree without talking: the task of an issue and the decision
// of a comment have ids derived from Key and the forge's numbers, which
// the store keeps unique.
//
// What it sees of the coordinator is the store, the coordinator's Do and
// the correction limit, never the coordinator itself.
type Source struct {
	cfg SourceConfig
	st  store.Store
	do  func(context.Context, Command) (Result, error)
	// correctionBytes is [limits] correction_bytes (0: the default).
	correctionBytes int

	mu      sync.Mutex
	issues  map[int]*sourced
	allowed map[string]allowedAt
	self    string // the token's login, once read: the status comments' author

	hooks wakeups // what webhooks named since (source_webhook.go)
}

type sourced struct {
	id    task.ID
	since time.Time
	seen  map[int64]bool
	done  bool // the task ended: nothing more to read
	// statusID is the status comment, found among the comments after a
	// restart; statusBody what it says; label the state label set.
	statusID   int64
	statusBody string
	label      string
	labelled   bool
	// pull is the task's pull request once it has one; its line
	// comments are read from reviewSince on (source_review.go).
	pull        int
	reviewSince time.Time
	reviewSeen  map[int64]bool
	// cursor is what the store holds of since and reviewSince
	// (source_cursor.go).
	cursor cursorState
	// editSaid hashes the issue's text last compared with the task
	// (source_edit.go).
	editSaid string
}

type allowedAt struct {
	ok bool
	at time.Time
}

// NewSource returns a source feeding c.
func NewSource(c *Coordinator, cfg SourceConfig) *Source {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	s := &Source{cfg: cfg, issues: map[int]*sourced{}, allowed: map[string]allowedAt{}}
	if c != nil {
		s.st, s.do, s.correctionBytes = c.st, c.Do, c.cfg.Limits.CorrectionBytes
	}
	return s
}

// IssueTaskID is the task id of issue number on the forge key names: a
// ULID whose random part is a hash of both, the same for every engine.
func IssueTaskID(key string, number int) task.ID {
	return task.ID(derivedULID(0, fmt.Sprintf("%s issue %d", key, number)))
}

// CommentDecisionID is the decision id of a forge comment: its creation
// time then a hash of key and the comment's id, so decisions still sort by
// time and one comment is one decision in the store.
func CommentDecisionID(key string, comment forge.Comment) string {
	return derivedULID(comment.Created.UnixMilli(), fmt.Sprintf("%s comment %d", key, comment.ID))
}

func derivedULID(ms int64, what string) string {
	sum := sha256.Sum256([]byte(what))
	id, err := ulid.New(uint64(max(ms, 0)), bytes.NewReader(sum[:]))
	if err != nil {
		panic(err) // the entropy is 32 bytes, and ms is clamped: never
	}
	return id.String()
}

// Run polls the forge until ctx ends. A failed poll is logged and tried
// again after a backoff that doubles with each failure in a row, from the
// interval up to sourceBackoffMax (a forge that is down is not hammered,
// and one that is back is read within that bound); a rate limit waits
// until the forge's reset. Between polls, what a webhook names (Wake) is
// read at once. Nothing is lost meanwhile: every read starts
// from what the store and the source have recorded, so the comments
// posted during an outage are read when it ends.
func (s *Source) Run(ctx context.Context) error {
	wait := s.cfg.Interval
	for {
		err := s.Poll(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var rl *forge.RateLimitError
		limited := false
		switch {
		case err == nil:
			wait = s.cfg.Interval
		case errors.As(err, &rl):
			wait, limited = max(time.Until(rl.Reset), s.cfg.Interval), true
			s.cfg.Log.Warn("forge rate limit", "reset", rl.Reset, "wait", wait)
		case errors.Is(err, errIssueList):
			// The forge did not answer the first read: down, or
			// unreachable.
			wait = min(2*wait, max(sourceBackoffMax, s.cfg.Interval))
			s.cfg.Log.Warn("forge poll failed", "err", err, "retry in", wait)
		default:
			// One issue's trouble: the others are read on time.
			wait = s.cfg.Interval
			s.cfg.Log.Warn("forge poll failed", "err", err)
		}
		if err := s.sleep(ctx, wait, limited); err != nil {
			return err
		}
	}
}

// errIssueList marks a poll whose first read, the issue list, failed.
var errIssueList = errors.New("list the labelled issues")

// sourceBackoffMax bounds the wait between polls of a forge that fails.
const sourceBackoffMax = 8 * time.Second

// Poll reads the forge once: new issues become tasks, closed ones cancel
// theirs, and new comments on every live task's issue become corrections
// or refusals.
func (s *Source) Poll(ctx context.Context) error {
	list, err := s.cfg.Forge.Issues(ctx, s.cfg.Label, time.Time{})
	if err != nil {
		return fmt.Errorf("%w: %w", errIssueList, err)
	}
	open := map[int]bool{}
	var errs []error
	for _, is := range list {
		open[is.Number] = true
		if err := s.issue(ctx, is); err != nil {
			errs = append(errs, err)
		}
	}
	s.mu.Lock()
	var numbers []int
	for n, sc := range s.issues {
		if !sc.done {
			numbers = append(numbers, n)
		}
	}
	s.mu.Unlock()
	slices.Sort(numbers)
	for _, n := range numbers {
		if !open[n] {
			if err := s.closed(ctx, n); err != nil {
				errs = append(errs, err)
			}
		} else if err := s.comments(ctx, n); err != nil {
			errs = append(errs, err)
		}
		if err := s.reviews(ctx, n); err != nil {
			errs = append(errs, err)
		}
	}
	if len(numbers) > 0 {
		// Closed issues too: the status comment says how the task
		// ended (merged, cancelled) before the source lets it go.
		all, err := s.statuses(ctx)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		for _, n := range numbers {
			if err := s.status(ctx, n, all); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// issue makes an open labelled issue a task, once.
func (s *Source) issue(ctx context.Context, is forge.Issue) error {
	s.mu.Lock()
	_, known := s.issues[is.Number]
	s.mu.Unlock()
	if known {
		return s.edited(ctx, is)
	}
	id := IssueTaskID(s.cfg.Key, is.Number)
	if t, err := s.st.TaskGet(ctx, id); err == nil {
		// Added before this engine started, or by another engine.
		s.track(is.Number, id, t.State.Terminal())
		return s.edited(ctx, is)
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	ok, err := s.mayWrite(ctx, is.Author)
	if err != nil {
		return err
	}
	if !ok {
		return nil // an outsider's issue is not work: it stays unread
	}
	t := s.taskOf(is)
	t.ID = id
	_, err = s.do(ctx, Command{Kind: CmdAdd, Task: &t, Author: s.author(is.Author), Source: is.URL, Issue: is.Number})
	if err != nil {
		if _, gerr := s.st.TaskGet(ctx, id); gerr != nil {
			// Not runnable as written (no verify block, an unknown
			// harness): said once, not retried every tick.
			s.track(is.Number, id, true)
			return fmt.Errorf("issue #%d is not a task: %w", is.Number, err)
		}
		// Another engine on the store added it first: the store kept one.
	}
	s.track(is.Number, id, false)
	return nil
}

func (s *Source) track(n int, id task.ID, done bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.issues[n]; !ok {
		s.issues[n] = &sourced{id: id, seen: map[int64]bool{}, reviewSeen: map[int64]bool{}, done: done}
	}
}

// closed cancels the task of an issue that left the open list, once the
// forge says it is closed (a removed label leaves the task alone), unless
// the task's pull request is open: its merge is what closed the issue.
func (s *Source) closed(ctx context.Context, n int) error {
	is, err := s.cfg.Forge.Issue(ctx, n)
	if err != nil {
		return err
	}
	if is.Open {
		return nil
	}
	s.mu.Lock()
	id := s.issues[n].id
	s.mu.Unlock()
	t, err := s.st.TaskGet(ctx, id)
	if err != nil || t.State.Terminal() {
		return err
	}
	if t.State == task.StatePullOpen {
		// Merging the pull request ("Closes #N") closed it: the pull
		// request's poll sees the merge and completes the task.
		return nil
	}
	_, err = s.do(ctx, Command{Kind: CmdCancel, TaskID: id, Author: "the forge (issue #" + fmt.Sprint(n) + " closed)"})
	if err != nil && !t.State.Terminal() {
		if now, gerr := s.st.TaskGet(ctx, id); gerr == nil && now.State.Terminal() {
			return nil // another engine cancelled it
		}
	}
	return err
}

// comments reads an issue's comments since the last read: an allowed
// user's becomes a decision (typed into the live pane), anyone else's a
// refusal. The store keeps each comment's decision and refusal once, so a
// comment read again after a restart or by a second engine is a no-op.
func (s *Source) comments(ctx context.Context, n int) (err error) {
	s.mu.Lock()
	sc := s.issues[n]
	id := sc.id
	s.mu.Unlock()
	t, err := s.st.TaskGet(ctx, id)
	if err != nil {
		return err
	}
	if t.State.Terminal() {
		return nil // status says how it ended, then lets the issue go
	}
	if err := s.loadComments(ctx, n, sc); err != nil {
		return err
	}
	s.mu.Lock()
	since := sc.since
	s.mu.Unlock()
	list, err := s.cfg.Forge.Comments(ctx, n, since)
	if err != nil {
		return err
	}
	// Recorded first, then the cursor: how far it moves is how many
	// were handled.
	handled := 0
	defer func() { err = errors.Join(err, s.saveComments(ctx, n, sc, list, handled)) }()
	for i, cm := range list {
		handled = i
		s.mu.Lock()
		seen := sc.seen[cm.ID]
		s.mu.Unlock()
		if seen {
			continue
		}
		mine, err := s.mine(ctx, cm)
		if err != nil {
			return err
		}
		if mine {
			// The task's own status comment (or one posted before a
			// restart): edited from now on, never read as a correction.
			// The marker alone is not enough: anyone can type it.
			s.mu.Lock()
			if sc.statusID == 0 {
				sc.statusID, sc.statusBody = cm.ID, cm.Body
			}
			sc.seen[cm.ID] = true
			s.mu.Unlock()
			continue
		}
		ok, err := s.mayWrite(ctx, cm.Author)
		if err != nil {
			return err
		}
		text := s.clip(task.PlainText(cm.Body))
		cmd := Command{Kind: CmdCorrect, TaskID: id, Text: text, Author: s.author(cm.Author),
			DecisionID: CommentDecisionID(s.cfg.Key, cm)}
		if !ok {
			cmd.Kind = CmdRefuse
			cmd.Text = fmt.Sprintf("Comment %s by %s, who may not correct this task, was not delivered: %s",
				cm.URL, task.PlainLine(cm.Author), task.PlainLine(clipTo(text, 200)))
		}
		if strings.TrimSpace(text) != "" {
			if _, err := s.do(ctx, cmd); err != nil {
				if now, gerr := s.st.TaskGet(ctx, id); gerr == nil && now.State.Terminal() {
					return nil // it ended meanwhile: the comment reaches no one
				}
				return fmt.Errorf("comment %d on #%d: %w", cm.ID, n, err)
			}
		}
		s.mu.Lock()
		sc.seen[cm.ID] = true
		s.mu.Unlock()
	}
	handled = len(list)
	return nil
}

// mine reports whether cm is a status comment this source posted: it
// carries StatusMarker and its author is the token's account.
func (s *Source) mine(ctx context.Context, cm forge.Comment) (bool, error) {
	if !strings.Contains(cm.Body, StatusMarker) {
		return false, nil
	}
	s.mu.Lock()
	self := s.self
	s.mu.Unlock()
	if self == "" {
		var err error
		if self, err = s.cfg.Forge.Self(ctx); err != nil {
			return false, err
		}
		s.mu.Lock()
		s.self = self
		s.mu.Unlock()
	}
	return cm.Author == self, nil
}

// mayWrite reports whether user may open tasks and correct them: listed in
// Users, or, with no list, a collaborator with write access (asked at most
// once a minute per user).
func (s *Source) mayWrite(ctx context.Context, user string) (bool, error) {
	if len(s.cfg.Users) > 0 {
		return slices.Contains(s.cfg.Users, user), nil
	}
	s.mu.Lock()
	a, ok := s.allowed[user]
	s.mu.Unlock()
	if ok && time.Since(a.at) < time.Minute {
		return a.ok, nil
	}
	w, err := s.cfg.Forge.CanWrite(ctx, user)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	s.allowed[user] = allowedAt{ok: w, at: time.Now()}
	s.mu.Unlock()
	return w, nil
}

func (s *Source) author(user string) string { return task.PlainLine(user) + " (forge)" }

func (s *Source) clip(text string) string {
	limit := s.cfg.Limit
	if limit <= 0 {
		limit = s.correctionBytes
	}
	if limit <= 0 {
		limit = 16 << 10
	}
	return clipTo(text, limit)
}

// clipTo cuts s to at most n bytes on a rune boundary.
func clipTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]>>6 == 2 { // a UTF-8 continuation byte
		n--
	}
	return s[:n] + "…"
}

var (
	checkbox   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*[-*]\s+\[[ xX]\]\s+(.+)$`) })
	listItem   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(?:[-*]|\d+[.)])\s+(.+)$`) })
	acceptHead = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^\s*#+\s*acceptance\b`) })
	heading    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*#+\s`) })
)

// taskOf reads a task from an issue: the title; the body as the goal; the
// acceptance from its checklist or its "Acceptance" section; the verify
// command from a fenced verify block; harness, model, pipeline and
// capabilities from labels.
func (s *Source) taskOf(is forge.Issue) task.Task {
	body := s.clip(task.PlainText(is.Body))
	t := task.Task{Title: fmt.Sprintf("#%d %s", is.Number, task.PlainLine(is.Title)), Verify: s.cfg.Verify}
	var goal []string
	var inVerify, inAccept bool
	var verify []string
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), len(body)+1)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case inVerify:
			if strings.HasPrefix(trimmed, "```") {
				inVerify = false
				t.Verify = strings.TrimSpace(strings.Join(verify, "\n"))
			} else {
				verify = append(verify, line)
			}
			continue
		case trimmed == "```verify":
			inVerify = true
			continue
		case acceptHead().MatchString(line):
			inAccept = true
			continue
		case heading().MatchString(line):
			inAccept = false
		}
		if m := checkbox().FindStringSubmatch(line); m != nil {
			t.Acceptance = append(t.Acceptance, strings.TrimSpace(m[1]))
			continue
		}
		if inAccept {
			if m := listItem().FindStringSubmatch(line); m != nil {
				t.Acceptance = append(t.Acceptance, strings.TrimSpace(m[1]))
			} else if trimmed != "" {
				t.Acceptance = append(t.Acceptance, trimmed)
			}
			continue
		}
		goal = append(goal, line)
	}
	t.Goal = strings.TrimSpace(strings.Join(goal, "\n"))
	if t.Goal == "" {
		t.Goal = task.PlainLine(is.Title)
	}
	t.Goal += "\n\n(From " + is.URL + ".)"
	for _, l := range is.Labels {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "harness":
			t.Harness = v
		case "model":
			t.Model = v
		case "pipeline":
			if p, err := task.ParsePipeline(v); err == nil {
				t.Pipeline = p
			}
		case "capability":
			t.Capabilities = append(t.Capabilities, v)
		}
	}
	return t
}

// hasDecision reports whether st holds decision id of task.
func hasDecision(ctx context.Context, st store.Store, taskID task.ID, id string) bool {
	ds, err := st.DecisionList(ctx, taskID)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(ds, func(d store.Decision) bool { return d.ID == id })
}

// refuseOutside records in st, once per cmd.DecisionID, ev: the refusal of
// a forge comment its author may not make, which publish tells
// subscribers of. The operator sees it, the agent never.
func refuseOutside(ctx context.Context, st store.Store, publish func(task.Event), t task.Task, ev task.Event, cmd Command) cmdReply {
	if cmd.DecisionID != "" {
		ev.ID = cmd.DecisionID
		evs, err := st.EventList(ctx, store.EventListParams{TaskID: t.ID})
		if err == nil && slices.ContainsFunc(evs, func(e task.Event) bool { return e.ID == ev.ID }) {
			return cmdReply{res: Result{TaskID: t.ID, Message: "already refused"}}
		}
	}
	if err := st.EventAppend(ctx, ev); err != nil {
		return cmdReply{err: fmt.Errorf("record refusal: %w", err)}
	}
	publish(ev)
	return cmdReply{res: Result{TaskID: t.ID, Message: "refused"}}
}
