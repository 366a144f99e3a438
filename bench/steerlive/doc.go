// Command steerlive measures what CrystalBall's steering costs the
// liveness of services, and what it prevents: for a list of services,
// seeds and modes — off, the immediate safety check alone (emulate
// --immediate) and execution steering with the check (emulate --mode
// steer --immediate) — it emulates every combination under one fault
// schedule and scores each steered run against the off run of the same
// service and seed.
//
//	go run ./bench/steerlive                          # the baseline: 6 targets, seeds 1-12, 10m, churn 1/m, breaks 2/m
//	go run ./bench/steerlive --services permits@3 --seeds 1-3 --duration 2m
//	go run ./bench/steerlive --services zoo-lockd,zoo-lockd:all --steer-flags "--veto-hold 1m"
//	go run ./bench/steerlive --list                   # the services it can run
//	make steerlive STEERLIVE_SEEDS=1-12 STEERLIVE_FLAGS="--services mutex"
//
// # The runs
//
// Every run is one `crystalball emulate` command line (Plan.Args: the
// service, its --fix and --nodes, --duration, --churn, --breaks, --seed,
// the mode's flags and --json), run in process through cli.Program.Run —
// the code path of the command — for the services linked in (the
// newcomer's permits, commit and mutex, the bug zoo's and the papers'),
// and as a process of a program built once with go build for the main
// packages that serve a service of their own (lock: examples/lock; elect:
// examples/elect/cmd/elect), which cannot be imported. A run is a pure
// function of its command line, so a report's figures are a function of
// the plan and the code — except the measured times: the run's wall
// time, its process CPU time (this process's while it ran in process, the
// child's otherwise) and the wall time the nodes' steering rounds took
// (emulation.SteeringResult.ExplorationSeconds; the emulator runs them on
// its one goroutine, so it is their CPU time on an unloaded core).
//
// # The figures
//
// Per target and seed (Row), per mode: the liveness and bounded
// properties holding at the end of the run (a liveness property on the
// final state after the heal, a bounded one with no outage under way),
// the states violating a safety property, and the properties' outages;
// per steered mode: the liveness cost — properties that hold at the end
// of the off run and fail at the end of the steered run of the same seed
// — and the actions changed, the events steering kept from a handler
// (filter hits and vetoes) over the events handled or stopped. Per target
// (ServiceReport): the seeds whose off run violated a safety property,
// how many of them each steered mode prevented (no violation steered) and
// how many seeds it caused to violate (none off), the liveness cost
// summed and its seeds, the actions changed over all seeds, each
// property's mean availability per mode, and the measured times per run.
// The last line is one JSON object of totals (Totals, format
// crystalball-steerlive/1). --runs writes every run's record.
package main
