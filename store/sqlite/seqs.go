package sqlite

import (
	"context"
	"sync"
)

// maxSeqs bounds the ledger positions kept of this Store's own appends.
const maxSeqs = 4096

// seqCache keeps the seq SQLite gave each event this Store appended, so
// EventSeqs answers the coordinator's question about the events it just
// wrote (the seqs its consoles are sent with, coord's hub) without a query
// per publish. A transaction's seqs are kept only once it commits.
type seqCache struct {
	mu sync.Mutex
	// tx holds the seqs of the write transaction under way (there is one
	// at a time: the writer has one connection).
	tx    []idSeq
	m     map[string]int64
	order []string
}

type idSeq struct {
	id  string
	seq int64
}

// appended notes an event of the transaction under way.
func (c *seqCache) appended(id string, seq int64) {
	c.mu.Lock()
	c.tx = append(c.tx, idSeq{id, seq})
	c.mu.Unlock()
}

// ended keeps the transaction's seqs when it committed and drops them
// when it did not.
func (c *seqCache) ended(committed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if committed {
		if c.m == nil {
			c.m = map[string]int64{}
		}
		for _, e := range c.tx {
			if _, ok := c.m[e.id]; !ok {
				c.order = append(c.order, e.id)
			}
			c.m[e.id] = e.seq
		}
		for len(c.order) > maxSeqs {
			delete(c.m, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.tx = c.tx[:0]
}

// take returns the kept seqs of ids and the ids it does not keep; an
// answered id is forgotten (the hub asks once per event).
func (c *seqCache) take(ids []string) (map[string]int64, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(ids))
	var miss []string
	for _, id := range ids {
		if seq, ok := c.m[id]; ok {
			out[id] = seq
			delete(c.m, id)
			continue
		}
		miss = append(miss, id)
	}
	if len(c.m) == 0 {
		c.order = c.order[:0]
	}
	return out, miss
}

// EventSeqs returns the seq of each of ids in the ledger: those this Store
// appended from what SQLite answered then, the others from the ledger.
func (s *Store) EventSeqs(ctx context.Context, ids []string) (map[string]int64, error) {
	out, miss := s.seqs.take(ids)
	if len(miss) == 0 {
		return out, nil
	}
	got, err := s.Ops.EventSeqs(ctx, miss)
	if err != nil {
		return nil, err
	}
	for id, seq := range got {
		out[id] = seq
	}
	return out, nil
}
