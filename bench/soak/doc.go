// Command soak runs a live crystalball cluster for a long time under
// SIGKILL churn and a hostile peer, and judges whether it stayed healthy:
// `make soak`, not part of make test (docs/PERFORMANCE.md, "The soak").
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
//   - holds idle keep-alive connections to the status server;
//   - walks a node's checkpoint number up window by window (2,000
//     numbers stamped k·2^20 from one forged ID);
//   - sends snapshot Requests naming 1,000 members nobody runs, each;
//   - sends steering requests whose names are 300 KB of terminal
//     escapes;
//   - pins the node's inbound slots: 1,100 connections from nine
//     loopback addresses, each with a hello of an ID nobody confirmed;
//   - sends the status server rebinding GETs and cross-site POSTs.
//
// (--attacks chooses among them.) The nodes run the paper's RandTree
// with one correction, --fix root-siblings (the soak's --fix): its bug 3
// keeps an orphaned child's siblings when it becomes a root, and a root
// never probes its siblings, so a child whose only peer is a sibling,
// orphaned when its root restarts, stays a root for good. That is the
// protocol, not the runtime — a shortened soak on main (8 nodes, 4 min,
// seed 3) ended with n7 "root=n7 children=[n3 n8] siblings=[n2 n4]
// peers=[n2]" in its trail for the whole heal phase —, and the soak judges
// the runtime; --fix "" runs the paper's code. Each sample's tree states,
// filters and timers are written to trail.txt in the soak's directory.
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
