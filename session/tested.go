package session

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// versionNumber finds the first dotted version number in a --version line.
var versionNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d+(?:\.\d+)+`) })

// TestedVersion says whether the installed version (the program's
// --version output) lies in the range the harness was tested with. It
// returns a status ("ok" or "warn") and a sentence, or "" for both when the
// harness names no range.
func (s Spec) TestedVersion(version string) (string, string) {
	if len(s.Tested) != 2 {
		return "", ""
	}
	lo, hi := s.Tested[0], s.Tested[1]
	v := versionNumber().FindString(version)
	if v == "" {
		return "warn", fmt.Sprintf("could not read a version from %q; tested with %s to %s", version, lo, hi)
	}
	if compareVersions(v, lo) < 0 || compareVersions(v, hi) > 0 {
		return "warn", fmt.Sprintf("%s is outside the tested range %s to %s", v, lo, hi)
	}
	return "ok", fmt.Sprintf("%s is in the tested range %s to %s", v, lo, hi)
}

// compareVersions compares dotted version numbers numerically.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
