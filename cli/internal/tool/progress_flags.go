package tool

import (
	"flag"
	"fmt"
	"strings"
)

// quietFlag defines --quiet: no progress on stderr (the status line on a
// terminal, the line every PlainProgressEvery elsewhere).
func quietFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("quiet", false, fmt.Sprintf("no progress on stderr (a status line on a terminal, else a line every %v)", PlainProgressEvery))
}

// seedHint is an emulated run's error with the flag that reruns it: the
// emulator's own "; rerun with seed=N" becomes "(rerun with --seed N)",
// said once.
type seedHint struct {
	err  error
	seed uint64
}

func (e seedHint) Error() string {
	msg := strings.Replace(e.err.Error(), fmt.Sprintf("; rerun with seed=%d", e.seed), "", 1)
	return fmt.Sprintf("%s (rerun with --seed %d)", msg, e.seed)
}

func (e seedHint) Unwrap() error { return e.err }

// pluralOf renders n things, singular for one: "1 episode", "3 episodes".
func pluralOf[N ~int | ~int64 | ~uint64](n N, thing string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", thing)
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
