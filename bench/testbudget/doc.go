// Command testbudget keeps `make test` inside its time budget: it measures
// what every package's tests cost in CPU, prints the slowest tests, and
// fails when a package costs more than the budget (two minutes of the
// reference machine's CPU a package; a package should stay under half of
// it).
//
// It has three parts, joined by a records file and a calibration file:
//
//	testbudget calibrate -out CAL
//	go test -json -exec "testbudget exec -records FILE" ./... | testbudget report -records FILE -calibration CAL -recalibrate
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
// `testbudget calibrate -out FILE` makes CPU seconds comparable across
// machines: it times a fixed, CPU-bound, single-goroutine workload (a
// breadth-first search of small states, cloned, encoded, hashed and kept
// in a map: the shape of the explorer's inner loop, in standard-library
// code only) five times, takes the median and appends it to FILE with its
// factor, the ratio to the same workload's CPU on the reference machine
// (the 2-vCPU AMD EPYC docs/PERFORMANCE.md's figures are taken on) under
// the same instrumentation (a race-built testbudget calibrates the race
// suite). `report -calibration FILE` divides every package's CPU by the
// slowest factor in FILE and judges the budget in those reference
// seconds, printing both; -recalibrate measures once more when the stream
// ends, so that a machine that got busier while the tests ran is judged
// by its busier state. A package over half the budget passes with a
// warning naming it.
//
// -summary writes the figures as JSON; `make test-times` reprints the
// report of the last `make test` from the files it kept in bin/.
//
// testbudget reads only its stdin and the records file; it starts no
// goroutine but the exec wrapper's signal forwarder, and never retries.
package main
