package session

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A CLI that does not answer --version in time gives an error that says
// so, not an empty version read as "no version", and a child of it that
// keeps the output open does not hold the probe (or outlive it).
func TestVersionProbeThatTimesOutSaysSo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "slowcli")
	// The shell waits for a child that holds stdout open.
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\nsleep 1000\necho slowcli 1.2.3\n"), 0o755))
	v, err := versionOf(context.Background(), bin, nil, dir, 50*time.Millisecond)
	require.Empty(t, v)
	require.EqualError(t, err, "slowcli --version did not answer within 50ms")

	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho slowcli 1.2.3\n"), 0o755))
	v, err = versionOf(context.Background(), bin, nil, dir, time.Minute)
	require.NoError(t, err)
	require.Equal(t, "slowcli 1.2.3", v)
}
