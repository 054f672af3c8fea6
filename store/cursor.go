package store

import "time"

// Cursor is how far a forge source (coord.Source) has read one of its
// lists: the comments of an issue, the line comments of a pull request.
// The source writes it after it has recorded what it read, so an engine
// started again asks the forge from Since, not from the beginning; a
// crash between the two reads a few comments again, which the store's
// one decision per comment id makes harmless.
type Cursor struct {
	// Source is the source's key (the forge, its address and the
	// repository), What the list ("issue 12 comments", "pull 13 review
	// comments"): together the row's key.
	Source, What string
	// Since is where the next read starts: everything updated before it
	// has been recorded. A write never moves it back.
	Since time.Time
	// Ref is an id the source keeps with the list: for an issue's
	// comments, the task's status comment, which a read from Since may
	// no longer return. A write of 0 keeps the one recorded.
	Ref int64
}
