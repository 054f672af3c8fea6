package verify

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFailedTestsNamesEachFailingTestOnce(t *testing.T) {
	t.Parallel()
	out := "=== RUN   TestAdd\n--- FAIL: TestAdd (0.00s)\n    --- FAIL: TestAdd/neg (0.00s)\n--- PASS: TestMul (0.00s)\nFAIL\n" +
		"test calc::sub ... FAILED\ntest calc::mul ... ok\nFAILED tests/test_x.py::test_y - assert 1 == 2\n--- FAIL: TestAdd (0.00s)\n"
	require.Equal(t, []string{"TestAdd", "TestAdd/neg", "calc::sub", "tests/test_x.py::test_y"}, FailedTests(out))
	require.Empty(t, FailedTests("ok  \tpkg\t0.01s\n--- PASS: TestMul (0.00s)\n"))
}
