package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// StopAll stops every session host of the repository at root that keep
// does not name (nil keeps none), each with its agent's whole tree, and
// collects their exits so they go. It returns one line per host it found.
// A socket nobody serves any more (its host died with the machine) is
// removed.
func StopAll(ctx context.Context, root, version string, grace time.Duration, keep func(sessionID string) bool) []string {
	ents, err := os.ReadDir(Dir(root))
	if err != nil {
		return nil
	}
	var (
		mu    sync.Mutex
		lines []string
		wg    sync.WaitGroup
	)
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".sock")
		if !ok || (keep != nil && keep(id)) {
			continue
		}
		wg.Go(func() {
			line := stopOne(ctx, root, id, version, grace)
			mu.Lock()
			lines = append(lines, line)
			mu.Unlock()
		})
	}
	wg.Wait()
	return lines
}

// sweepDials bounds each dial of a host to stop, one after the other: a
// host slow to answer on a loaded machine is dialled again with more time
// rather than left running with its agent for good.
var sweepDials = []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second}

func stopOne(ctx context.Context, root, id, version string, grace time.Duration) string {
	sock := SocketPath(root, id)
	var (
		cl  *Client
		err error
	)
	for _, wait := range sweepDials {
		dctx, cancel := context.WithTimeout(ctx, wait)
		cl, err = Dial(dctx, sock, version)
		timedOut := dctx.Err() != nil
		cancel()
		if err == nil || !timedOut || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		if NotServing(err) {
			_ = os.Remove(sock)
			return fmt.Sprintf("session %s: its host was gone already", short(id))
		}
		return fmt.Sprintf("session %s: %v", short(id), err)
	}
	defer cl.Close()
	if e, _ := cl.Exit(); e != nil {
		return fmt.Sprintf("session %s: its agent had exited with code %d at %s; host ended", short(id), e.Code, e.At.Format(time.RFC3339))
	}
	if err := cl.Stop(grace); err != nil {
		return fmt.Sprintf("session %s (agent pid %d): %v", short(id), cl.Pid(), err)
	}
	return fmt.Sprintf("session %s (agent pid %d) stopped, exit %d; host ended", short(id), cl.Pid(), cl.ExitCode())
}

// NotServing reports whether a dial failed because nothing serves the
// socket any more.
func NotServing(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

func short(id string) string {
	if len(id) > 8 {
		return id[len(id)-8:]
	}
	return id
}
