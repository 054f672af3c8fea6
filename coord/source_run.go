package coord

import (
	"context"
	"log/slog"
	"net"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/forge"
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
		s := NewSource(c, SourceConfig{Forge: f, Key: src.Forge + " " + src.URL + " " + src.Repo,
			Label: src.Label, Users: src.Users, Log: slog.Default()})
		startWebhook(ctx, src, s)
		_ = s.Run(ctx)
	}()
}

// startWebhook serves [source] webhook, when set, until ctx ends: its
// deliveries wake s. Without its secret, or when the address cannot be
// listened on, it says so in the log and the source polls alone.
func startWebhook(ctx context.Context, src config.Source, s *Source) {
	if src.Webhook == "" {
		return
	}
	log := slog.Default()
	secret, err := src.WebhookSecret()
	if err != nil {
		log.Warn("[source] webhook is off: polling only", "err", err)
		return
	}
	l, err := net.Listen("tcp", src.Webhook)
	if err != nil {
		log.Warn("[source] webhook is off: polling only", "err", err)
		return
	}
	log.Info("[source] webhook receiving", "addr", l.Addr().String(), "forge", src.Forge)
	go func() {
		if err := ServeWebhook(ctx, l, NewWebhook(forge.Kind(src.Forge), secret, s.Wake, log)); err != nil {
			log.Warn("[source] webhook stopped: polling only", "err", err)
		}
	}()
}

// taskSource is where an added task came from: a forge issue.
type taskSource struct {
	URL   string
	Issue int
}
