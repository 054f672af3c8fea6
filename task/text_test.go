package task

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// hostile holds what text from outside could carry: a clipboard write
// (OSC 52), a clear screen, a cursor home, a window title, a full reset, an
// 8-bit CSI, a paste start, ^C, ^D, a lone \r and DEL.
const hostile = "Fix\x1b]52;c;cm0gLXJmIH4K\x07 calc\x1b[2J\x1b[H\x1b]0;pwned\x1b\\\x1bc\u009b31m\x1b[200~ done\x03\x04\rnext\x7f\tline\n"

func TestPlainTextKeepsLinesAndTabsOnly(t *testing.T) {
	t.Parallel()
	require.Equal(t, "Fix calc done\nnext\tline\n", PlainText(hostile))
	require.Equal(t, "a\nb\nc", PlainText("a\r\nb\rc"))
	require.Equal(t, "bad \uFFFD byte", PlainText("bad \xff byte"))
	kept := "héllo — ✓ 日本\n\tindented"
	require.Equal(t, kept, PlainText(kept))
}

func TestPlainLineIsOneLine(t *testing.T) {
	t.Parallel()
	require.Equal(t, "Fix calc done ⏎ next line ⏎ ", PlainLine(hostile))
	require.Equal(t, "héllo — ✓ 日本", PlainLine("héllo — ✓ 日本"))
}

func TestSizesAreRefusedWithTheirLimit(t *testing.T) {
	t.Parallel()
	err := Task{Title: strings.Repeat("t", 10<<20), Goal: "g", Verify: "true"}.Validate()
	var se *SizeError
	require.ErrorAs(t, err, &se)
	require.Equal(t, "the task's title is 10485760 bytes, over its limit of 1024 bytes: give a short title and put the detail in the goal", se.Error())
	err = Task{Title: "t", Goal: strings.Repeat("g", MaxGoalBytes+1), Verify: "true"}.Validate()
	require.ErrorContains(t, err, "the task's goal is 65537 bytes, over its limit of 65536 bytes")
	require.NoError(t, CheckSizes(strings.Repeat("t", MaxTitleBytes), strings.Repeat("g", MaxGoalBytes), []string{"a"}))
	require.ErrorContains(t, CheckSizes("t", "g", []string{"a", strings.Repeat("a", MaxGoalBytes+1)}), "acceptance criterion 2")
}
