// Command crash is the crash test of live nodes, as Jepsen would run it: a
// cluster of `crystalball node` processes on loopback, each on its own
// data directory (--data-dir), is driven through repeated cycles that
// SIGKILL every node (kill-all) or a random part of them (kill-some) —
// half the cycles once the service has converged, half at a random moment
// of the protocol (within 50ms of a restart, or up to --max-delay) — and
// restart them on the same ports and directories. Every 50ms it reads
// every node's /status and judges the states:
//
//   - Paxos (--fix all): the learned value never changes (every node that
//     learns a value learns the first one learned, and keeps it), and no
//     acceptor breaks a promise (its promised and accepted ballots never go
//     back, and it never accepts below a ballot it promised); after the
//     settling cycles and the last one, every node has learned.
//   - RandTree, which keeps nothing on disk: after the settling cycles and
//     the last one, one tree of every node forms again.
//
// It prints a line per cycle and the cycles survived, kills and values
// learned per service; it fails (exit 1, logs kept) on a broken promise,
// a node that exits by itself, or a cluster that does not converge within
// --settle. --ephemeral runs the nodes without their stores, as main did
// before them, to show what the test catches. `make crash` runs the long
// form (docs/RESULTS.md); its test (TestCrashShort) is the short form in
// `make test`.
//
//	go run ./bench/crash --cycles 50 --seed 1
package main
