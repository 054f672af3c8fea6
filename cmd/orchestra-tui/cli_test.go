package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/project"
)

// cli runs the command in process and returns its exit status and output.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(args, nil, &out, &errb)
	return code, out.String(), errb.String()
}

// calcRepo is a throwaway calc repository with no tasks.
func calcRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	return root
}

func TestHelpExitsZeroWithSynopsis(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"add", "-h"}, {"run", "-h"}, {"status", "-h"}, {"correct", "-h"}, {"extend", "-h"},
		{"handoff", "export", "-h"}, {"fork", "list", "-h"}, {"model-stub", "-h"}, {"demo", "-h"},
	} {
		code, stdout, stderr := cli(t, args...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		require.Contains(t, stdout+stderr, "usage:", args)
	}
	for _, args := range [][]string{{"fork", "-h"}, {"handoff", "--help"}, {"--help"}} {
		code, stdout, _ := cli(t, args...)
		require.Equal(t, 0, code, args)
		require.Contains(t, stdout, "orchestra-tui ", args)
	}
}

func TestUsageErrorsExitTwoAndNameTheFlag(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"add", "-C", root, "--title", "x"}, "missing --goal"},
		{[]string{"add", "-C", root, "--goal", "g"}, "missing --verify"},
		{[]string{"add", "-C", root, "--goal", "g", "--verify", "true", "--pipeline", "plan,bogus"}, `--pipeline: unknown phase "bogus"`},
		{[]string{"add", "-C", root, "--goal", "g", "--verify", "true", "--harness", "nope"}, `--harness: no harness named "nope"`},
		{[]string{"add", "-C", root, "stray"}, `unexpected argument "stray"`},
		{[]string{"extend", "-C", root, "T", "1x"}, `extend: "1x" is not a positive duration`},
		{[]string{"correct", "-C", root, "T"}, "usage: orchestra-tui correct TASK TEXT"},
		{[]string{"status", "--bogus"}, "flag provided but not defined"},
		{[]string{"bogus"}, `unknown command "bogus"`},
	} {
		code, _, stderr := cli(t, tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		require.Contains(t, stderr, tc.want, tc.args)
		require.NotContains(t, stderr, "goroutine", tc.args)
	}
	require.Empty(t, tasksIn(t, root), "no usage error may add a task")
}

func TestAddFromFilesAndStatusJSON(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	dir := t.TempDir()
	tomlFile := filepath.Join(dir, "task.toml")
	require.NoError(t, os.WriteFile(tomlFile, []byte("title = \"From TOML\"\ngoal = \"g\"\nverify = \"go test ./...\"\npipeline = [\"implement\"]\n"), 0o644))
	jsonFile := filepath.Join(dir, "task.json")
	require.NoError(t, os.WriteFile(jsonFile, []byte(`{"goal": "g", "verify": "go test ./...", "harness": "shell"}`), 0o644))
	for _, f := range []string{tomlFile, jsonFile} {
		code, stdout, stderr := cli(t, "add", "-C", root, "--file", f)
		require.Equal(t, 0, code, stderr)
		require.Len(t, bytes.TrimSpace([]byte(stdout)), 26, "add prints the new task's id")
	}
	// A flag given with --file overrides the file.
	code, _, stderr := cli(t, "add", "-C", root, "--file", tomlFile, "--title", "Overridden")
	require.Equal(t, 0, code, stderr)

	badPipeline := filepath.Join(dir, "bad.toml")
	require.NoError(t, os.WriteFile(badPipeline, []byte("goal = \"g\"\nverify = \"true\"\npipeline = [\"bogus\"]\n"), 0o644))
	code, _, stderr = cli(t, "add", "-C", root, "--file", badPipeline)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, badPipeline+": pipeline: unknown phase")

	code, stdout, stderr := cli(t, "status", "-C", root, "--json")
	require.Equal(t, 0, code, stderr)
	var rows []struct{ Title, State string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows))
	titles := map[string]bool{}
	for _, r := range rows {
		titles[r.Title] = true
		require.Equal(t, "queued", r.State)
	}
	require.Equal(t, map[string]bool{"From TOML": true, "g": true, "Overridden": true}, titles)
}

func TestRunHeadlessWithoutTasksSaysSoAndFails(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	code, _, stderr := cli(t, "run", "--headless", "-C", root)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "no tasks to run; add one with `orchestra-tui add`")
}

func TestResumeOfAMissingFileSaysHowToMakeOne(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	code, _, stderr := cli(t, "run", "--headless", "-C", root, "--resume", filepath.Join(root, "nope.json"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "nope.json does not exist; write one with `orchestra-tui handoff export")
}

// The usage line of run names the headless flags the README teaches, and
// demo's -agent shows a placeholder, not a value, after the flag.
func TestUsageLinesNameTheirFlags(t *testing.T) {
	t.Parallel()
	_, _, stderr := cli(t, "run", "-h")
	first, _, _ := strings.Cut(stderr, "\n")
	for _, f := range []string{"--headless", "--json", "--stable", "--wait", "--resume", "-C DIR"} {
		require.Contains(t, first, f)
	}
	_, _, stderr = cli(t, "demo", "-h")
	require.Contains(t, stderr, "-agent NAME")
}

// The top-level usage names every built-in harness an operator can pass to
// add --harness, and says the engine (not the console) types corrections.
func TestTopLevelUsageHarnesses(t *testing.T) {
	t.Parallel()
	_, stdout, stderr := cli(t, "-h")
	flat := strings.Join(strings.Fields(stdout+stderr), " ")
	require.Contains(t, flat, "claude (Claude Code on PATH), claude-print (claude -p), codex, codex-exec, gemini, gemini-print, opencode, opencode-run, shell,")
	require.Contains(t, flat, "a running engine types it into the live pane")
}
