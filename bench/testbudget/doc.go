// Command testbudget keeps `make test` inside its time budget: it measures
// what every package's tests cost in CPU, prints the slowest tests, and
// fails when a package costs more than the budget (issue 26: the suite in
// five minutes on two cores, no package above two minutes).
//
// It has two halves, joined by a records file:
//
//	go test -json -exec "testbudget exec -records FILE" ./... | testbudget report -records FILE
//
// `testbudget exec` is a go test -exec wrapper: it runs one package's test
// binary (stdin, stdout and stderr passed through, SIGINT, SIGTERM and
// SIGQUIT forwarded), then appends one JSON line to FILE with the
// binary's CPU time (user and system, the processes it waited for
// included), wall time, peak resident memory and exit code, and exits
// with the binary's status. go test runs a package's binary in the
// package's directory, which is how a record names its package.
//
// `testbudget report` reads the go test -json stream on stdin and prints
// what `go test` would: a line per package (with its CPU time beside the
// wall time), the output of every failing test, build errors, and any
// line that is not JSON (the go command's own messages) as it is. At the
// end it prints the packages by CPU and the slowest tests by wall time,
// and exits non-zero if a test or a build failed, or a package's CPU time
// exceeded -budget (then it names the package and its slowest tests). CPU
// time is the budget's measure, not wall time, because CI shares its
// machine: at load 10 a package's wall time grows five-fold while its CPU
// time does not. A package without a record (go test run without the
// wrapper) is judged on its wall time, marked as such.
//
// -summary writes the figures as JSON; `make test-times` reprints the
// report of the last `make test` from the files it kept in bin/.
//
// testbudget reads only its stdin and the records file; it starts no
// goroutine but the exec wrapper's signal forwarder, and never retries.
package main
