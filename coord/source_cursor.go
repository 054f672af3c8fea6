package coord

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/orchestra-tui/orchestra-tui/forge"
	"github.com/orchestra-tui/orchestra-tui/store"
)

// The source keeps, per issue, where its next read of the comments
// starts (sourced.since), and per pull request where the next read of its
// line comments starts (sourced.reviewSince), in the store as well as in
// memory (store.Cursor), so an engine started again asks the forge for
// what came after, not for every comment since the issue was opened. The
// order is the store's decision first, then the cursor: a crash between
// the two reads those comments again, and the store's one decision per
// comment id keeps each one once. The conditional GETs' ETags stay in
// memory (forge/gitea, forge/github): after a start the first read of each
// list is unconditional, from the stored since.

// cursorState is what the store holds of an issue's cursors, so a poll
// writes only what moved.
type cursorState struct {
	loaded       bool // the comments cursor was read from the store
	since        time.Time
	ref          int64 // the status comment recorded with it
	reviewLoaded int   // the pull request whose cursor was read, 0 for none
	reviewSince  time.Time
}

func commentsCursor(n int) string { return fmt.Sprintf("issue %d comments", n) }
func reviewsCursor(pr int) string { return fmt.Sprintf("pull %d review comments", pr) }

// loadComments reads issue n's comments cursor from the store, once: the
// since to ask from and the status comment the source posted.
func (s *Source) loadComments(ctx context.Context, n int, sc *sourced) error {
	s.mu.Lock()
	loaded := sc.cursor.loaded
	s.mu.Unlock()
	if loaded {
		return nil
	}
	c, err := s.st.CursorGet(ctx, s.cfg.Key, commentsCursor(n))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("read the comments cursor of #%d: %w", n, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Since.After(sc.since) {
		sc.since = c.Since
	}
	if sc.statusID == 0 {
		sc.statusID = c.Ref
	}
	sc.cursor.loaded, sc.cursor.since, sc.cursor.ref = true, c.Since, c.Ref
	return nil
}

// saveComments moves issue n's since past the comments of list it handled
// (the first handled of them; the rest are read again) and records it in
// the store with the status comment, when either moved.
func (s *Source) saveComments(ctx context.Context, n int, sc *sourced, list []forge.Comment, handled int) error {
	s.mu.Lock()
	sc.since = nextSince(sc.since, list, handled)
	c := store.Cursor{Source: s.cfg.Key, What: commentsCursor(n), Since: sc.since, Ref: sc.statusID}
	moved := sc.cursor.loaded && (!c.Since.Equal(sc.cursor.since) || c.Ref != sc.cursor.ref)
	s.mu.Unlock()
	if !moved {
		return nil
	}
	if err := s.st.CursorPut(ctx, c); err != nil {
		return fmt.Errorf("record the comments cursor of #%d: %w", n, err)
	}
	s.mu.Lock()
	sc.cursor.since, sc.cursor.ref = c.Since, c.Ref
	s.mu.Unlock()
	return nil
}

// loadReviews reads the line comments cursor of pull request pr, once.
func (s *Source) loadReviews(ctx context.Context, pr int, sc *sourced) error {
	s.mu.Lock()
	loaded := sc.cursor.reviewLoaded == pr
	s.mu.Unlock()
	if loaded {
		return nil
	}
	c, err := s.st.CursorGet(ctx, s.cfg.Key, reviewsCursor(pr))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("read the review comments cursor of pull request #%d: %w", pr, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Since.After(sc.reviewSince) {
		sc.reviewSince = c.Since
	}
	sc.cursor.reviewLoaded, sc.cursor.reviewSince = pr, c.Since
	return nil
}

// saveReviews is saveComments for pull request pr's line comments.
func (s *Source) saveReviews(ctx context.Context, pr int, sc *sourced, list []forge.Comment, handled int) error {
	s.mu.Lock()
	sc.reviewSince = nextSince(sc.reviewSince, list, handled)
	c := store.Cursor{Source: s.cfg.Key, What: reviewsCursor(pr), Since: sc.reviewSince}
	moved := sc.cursor.reviewLoaded == pr && !c.Since.Equal(sc.cursor.reviewSince)
	s.mu.Unlock()
	if !moved {
		return nil
	}
	if err := s.st.CursorPut(ctx, c); err != nil {
		return fmt.Errorf("record the review comments cursor of pull request #%d: %w", pr, err)
	}
	s.mu.Lock()
	sc.cursor.reviewSince = c.Since
	s.mu.Unlock()
	return nil
}

// nextSince is where the next read of a list starts once its first
// handled comments are recorded: a second before the newest of them
// (Gitea's times are whole seconds; the repeats that reads again are
// dropped by seen and the store), but never past one that was not handled
// (a poll that failed half way), and never back.
func nextSince(since time.Time, list []forge.Comment, handled int) time.Time {
	next := since
	for _, cm := range list[:handled] {
		if u := stampOf(cm).Add(-time.Second); u.After(next) {
			next = u
		}
	}
	for _, cm := range list[handled:] {
		if u := stampOf(cm).Add(-time.Second); u.Before(next) {
			next = u
		}
	}
	if next.Before(since) {
		return since
	}
	return next
}

// stampOf is when a comment last changed: what a forge's since compares.
func stampOf(cm forge.Comment) time.Time {
	if cm.Updated.After(cm.Created) {
		return cm.Updated
	}
	return cm.Created
}
