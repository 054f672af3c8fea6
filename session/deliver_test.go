package session

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestResubmitLastInputResendsUnansweredInput(t *testing.T) {
	t.Parallel()
	// With echo off, typed text draws nothing, so it counts as unanswered
	// and a resubmit sends it again.
	spec := shSpec(`stty -echo; printf 'ready>'; read a; printf 'got:%s\n' "$a"; exec sleep 100`, `ready>`)
	spec.Resubmit = ResubmitLastInput
	b := setup(t, spec)
	require.NoError(t, b.s.WaitReady(context.Background()))
	require.NoError(t, b.s.Write([]byte("abc")))
	require.NoError(t, b.s.Resubmit("unused"))
	require.NoError(t, b.s.Submit())
	waitText(t, b.s, "got:abcabc")
}

func TestResubmitBriefRedelivers(t *testing.T) {
	t.Parallel()
	spec := shSpec(`printf 'ready>'; read a; printf 'got:%s\n' "$a"; exec sleep 100`, `ready>`)
	spec.Resubmit = ResubmitBrief
	b := setup(t, spec)
	require.NoError(t, b.s.WaitReady(context.Background()))
	require.NoError(t, b.s.Resubmit("the brief"))
	waitText(t, b.s, "got:the brief")
}

func TestDeliverStdinEndsWithEOF(t *testing.T) {
	t.Parallel()
	spec := shSpec(`printf 'ready>'; cat > in.txt; printf 'lines:'; wc -l < in.txt`, `ready>`)
	spec.Delivery = DeliveryStdin
	b := setup(t, spec)
	require.NoError(t, b.s.WaitReady(context.Background()))
	require.NoError(t, b.s.Deliver("one"))
	waitDone(t, b.s)
	require.Contains(t, b.s.View().Text(), "lines:1")
	require.Equal(t, 0, b.s.ExitCode())
}

func TestDeliverArgAppendsBriefToArgv(t *testing.T) {
	t.Parallel()
	spec := shSpec(`printf 'arg:%s\n' "$0"`, `x`)
	spec.Delivery = DeliveryArg
	b := setup(t, spec, func(p *Params) { p.Brief = "do the thing; rm -rf /" })
	waitDone(t, b.s)
	require.Contains(t, b.s.View().Text(), "arg:do the thing; rm -rf /")
}
