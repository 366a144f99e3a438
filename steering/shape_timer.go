package steering

import "strings"

// timerShape is a timer's name as Shape compares it: every run of digits
// becomes "#". Services number timers by request, attempt or peer
// ("done%d", "retry-3"), and a path that fires done3 is the same scenario
// as one that fires done17; without this one bug predicted along many
// requests counted as as many distinct predictions. A service whose
// numbered timers do differ in kind (a timer per phase "p1", "p2") has
// those paths merged; a name's letters still tell kinds apart.
func timerShape(name string) string {
	if strings.IndexFunc(name, isDigit) < 0 {
		return name
	}
	var b strings.Builder
	inDigits := false
	for _, r := range name {
		if isDigit(r) {
			if !inDigits {
				b.WriteByte('#')
			}
			inDigits = true
			continue
		}
		inDigits = false
		b.WriteRune(r)
	}
	return b.String()
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }
