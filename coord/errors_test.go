package coord

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// An agent that keeps writing an invalid artifact is refused again and
// again within one attempt; the attempt's error list, kept in memory and
// written into continuity and the next brief, keeps the newest errors and
// says how many earlier ones it dropped instead of growing without bound.
func TestAnAttemptKeepsABoundedErrorList(t *testing.T) {
	t.Parallel()
	r := &run{}
	for i := range maxRunErrors + 5 {
		r.addError(fmt.Sprintf("error %d", i))
	}
	list := r.errorList()
	require.Len(t, list, maxRunErrors)
	require.Equal(t, "(6 earlier errors of this attempt are not shown)", list[0])
	require.Equal(t, "error 6", list[1], "the newest errors are kept, in order")
	require.Equal(t, fmt.Sprintf("error %d", maxRunErrors+4), list[len(list)-1])
}
