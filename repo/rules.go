package repo

import (
	"io"
	"os"
	"path/filepath"
	"unicode/utf8"
)

// RulesFiles are the files Rules looks for at the repository root, in order
// of preference.
var RulesFiles = []string{"AGENTS.md", "CLAUDE.md", ".orchestra/rules.md"}

// RulesCap bounds the repository rules copied into a brief.
const RulesCap = 8 << 10

// rulesTruncated ends rules that were cut at RulesCap, so the agent knows
// it is not reading the whole file.
const rulesTruncated = "\n[truncated]\n"

// Rules returns the repository's rules for the brief: the contents of the
// first of RulesFiles present at the root as a regular file, at most
// RulesCap bytes (cut on a character boundary and marked), or "" when none
// is present or readable.
func (r *Repo) Rules() string {
	for _, name := range RulesFiles {
		path := filepath.Join(r.Root, filepath.FromSlash(name))
		// Lstat: a symlink could point anywhere on the machine; the rules
		// are the repository's own file or nothing.
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(f, RulesCap+1))
		f.Close()
		if err != nil {
			continue
		}
		if len(b) <= RulesCap {
			return string(b)
		}
		b = b[:RulesCap-len(rulesTruncated)]
		// Drop a character the cut split in two (at most UTFMax-1 bytes).
		for i := 1; i < utf8.UTFMax && len(b) > 0; i++ {
			if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size > 1 {
				break
			}
			b = b[:len(b)-1]
		}
		return string(b) + rulesTruncated
	}
	return ""
}
