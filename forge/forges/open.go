// Package forges opens the forge.Forge a configuration names: the one
// place that knows every implementation, so the engine imports only forge.
package forges

import (
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/forge"
	"github.com/orchestra-tui/orchestra-tui/forge/gitea"
	"github.com/orchestra-tui/orchestra-tui/forge/github"
)

// Open returns the forge cfg names.
func Open(cfg forge.Config) (forge.Forge, error) {
	switch cfg.Kind {
	case forge.GitHub:
		return github.New(cfg)
	case forge.Gitea, forge.Forgejo:
		return gitea.New(cfg)
	}
	return nil, fmt.Errorf("forge %q is not supported here (known: github, gitea, forgejo)", cfg.Kind)
}
