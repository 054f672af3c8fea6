package coord

import (
	"context"
	"log/slog"
	"strings"
)

// startSource runs the [source] forge's issue poller beside the loop when
// a label is configured: labelled issues become tasks and their comments
// corrections (Source). It ends with ctx. Poll failures go to the engine's
// log and are retried on the next tick.
func (c *Coordinator) startSource(ctx context.Context) {
	src := c.cfg.Source
	if !src.Configured() || strings.TrimSpace(src.Label) == "" {
		return
	}
	go func() {
		f, err := openForge(ctx, src)
		if err != nil {
			slog.Default().Warn("[source]: issues are not read", "forge", src.Forge, "repo", src.Repo, "err", err)
			return
		}
		_ = NewSource(c, SourceConfig{Forge: f, Key: src.Forge + " " + src.URL + " " + src.Repo,
			Label: src.Label, Users: src.Users, Log: slog.Default()}).Run(ctx)
	}()
}

// taskSource is where an added task came from: a forge issue.
type taskSource struct {
	URL   string
	Issue int
}
