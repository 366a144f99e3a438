// Command soak runs a live crystalball cluster for a long time under
// SIGKILL churn and a hostile peer, and judges whether it stayed healthy:
// the soak of issue 14 ("make soak"; not part of make test).
//
// It starts N `crystalball node` processes (RandTree, snapshots, --mode
// steer --immediate, steering's holds bounded by --filter-hold and
// --veto-hold: see nodeArgs) on loopback, kills a random node with SIGKILL and
// restarts it at the churn rate, and runs a hostile peer (in the soak's
// own process) that, in turn, against random nodes:
//
//   - sends a service message whose envelope carries checkpoint number
//     2^62 (poisoning the logical clocks);
//   - sends a hello that claims a live node's ID from another address;
//   - holds idle connections after a hello, and trickles a frame one byte
//     a second;
//   - sends 1 MB frames (a RandTree JoinReply with a million children);
//   - sends garbage datagrams to the gossip port;
//   - holds idle keep-alive connections to the status server.
//
// Every SampleEvery it reads each node's /status and /metrics and the
// process's /proc entry. After the churn phase it stops churn and attacks
// for Heal and judges. The run fails on: a node process that exited
// without being killed (a panic or a fatal error: its log tail is
// printed), a node whose gathers kept failing for FailStreak samples in a
// row, a checkpoint number above 2^40 (poisoned), resident memory,
// goroutines or open files above their bounds, or a tree that is not
// whole at the end (one root, every node joined, parents and children
// agreeing). Figures are printed as a table and, with -json, as one JSON
// object; docs/PERFORMANCE.md records a run.
package main
