package session

import (
	"runtime"
	"sync"
)

// The pty reader and the emulator run on two goroutines joined by a
// parseQueue, so parsing never blocks the pty read: a program's output is
// read (and recorded) as fast as the kernel hands it over, and the parser
// takes everything that piled up in one swap. Only when maxQueued bytes
// wait does the reader pause, so a flooding program is slowed to exactly
// the emulator's ingest rate and never below it, and the console's memory
// stays bounded.
const (
	// maxQueued is how many unparsed bytes a session holds before its
	// reader waits for the parser: a few hundred milliseconds of output at
	// the emulator's slowest ingest rate.
	maxQueued = 2 << 20
	// parseChunk bounds one emulator write, and so how long a frame that
	// pulls this pane's screen can wait for the emulator's lock.
	parseChunk = 16 << 10
)

// queuedResize is a resize that must reach the emulator after the first
// at bytes of the queue and before the rest.
type queuedResize struct {
	at         int
	cols, rows int
}

// parseQueue hands program output and resizes from the reader to the
// parser, in the order the recording has them.
type parseQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond // signalled on push, on drain and on close
	buf     []byte
	resizes []queuedResize
	spare   []byte // the parser's last buffer, reused by the next swap
	closed  bool
}

func newParseQueue() *parseQueue {
	q := &parseQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// waitRoom blocks while the queue is full and the parser is working on it.
func (q *parseQueue) waitRoom() {
	q.mu.Lock()
	for len(q.buf) >= maxQueued && !q.closed {
		q.cond.Wait()
	}
	q.mu.Unlock()
}

// push queues program output. It copies p.
func (q *parseQueue) push(p []byte) {
	q.mu.Lock()
	q.buf = append(q.buf, p...)
	q.mu.Unlock()
	q.cond.Broadcast()
}

// resize queues a size change after every byte pushed so far.
func (q *parseQueue) resize(cols, rows int) {
	q.mu.Lock()
	q.resizes = append(q.resizes, queuedResize{at: len(q.buf), cols: cols, rows: rows})
	q.mu.Unlock()
	q.cond.Broadcast()
}

// close lets the parser finish what is queued and then stop.
func (q *parseQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

// take waits for work and takes all of it; ok is false once the queue is
// closed and empty.
func (q *parseQueue) take() (data []byte, resizes []queuedResize, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.buf) == 0 && len(q.resizes) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.buf) == 0 && len(q.resizes) == 0 {
		return nil, nil, false
	}
	data, resizes = q.buf, q.resizes
	q.buf, q.resizes, q.spare = q.spare[:0], nil, nil
	return data, resizes, true
}

// done hands back the buffer take returned, once parsed, and wakes a
// reader waiting for room.
func (q *parseQueue) done(data []byte) {
	q.mu.Lock()
	if cap(data) <= 2*maxQueued {
		q.spare = data[:0]
	}
	q.mu.Unlock()
	q.cond.Broadcast()
}

// parseLoop feeds queued output and resizes to the emulator until the
// queue closes.
func (s *Session) parseLoop() {
	defer close(s.parserDone)
	for {
		data, resizes, ok := s.parse.take()
		if !ok {
			return
		}
		off := 0
		for _, r := range resizes {
			s.feed(data[off:r.at])
			off = r.at
			s.term.Resize(r.cols, r.rows)
			s.notify()
		}
		s.feed(data[off:])
		s.parse.done(data)
	}
}

// feed writes p to the emulator in bounded chunks, signalling each.
func (s *Session) feed(p []byte) {
	for len(p) > 0 {
		n := min(len(p), parseChunk)
		_, _ = s.term.Write(p[:n])
		p = p[n:]
		s.lastOutput.Store(s.now().UnixNano())
		s.notify()
		// A flooding pane keeps this goroutine busy without ever blocking,
		// and Go preempts it only every 10 ms: yielding after each bounded
		// write lets the goroutines of every other pane, a correction on
		// its way to a pty and the console's frame run within one chunk's
		// time (tens of microseconds) instead of waiting for a processor.
		runtime.Gosched()
	}
}

// trim drops the queue's buffers while nothing waits in them: a flood
// grows them to maxQueued and more, and an idle session needs neither.
func (q *parseQueue) trim() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.spare = nil
	if len(q.buf) == 0 {
		q.buf = nil
	}
}
