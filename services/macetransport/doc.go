// Package macetransport is MaceTransport, the reliable transport of
// MaceMC's case study (§5, Figures 3 and 4), written against node.Service:
// reliable, in-order, duplicate-suppressing and message-oriented, over
// datagrams (node.Env.SendDatagram only), with the test application of
// MaceMC's Table 1 ("AllAcked") in the same service value — including the
// bug MaceMC found, and an option that applies its correction. A service
// that cannot reproduce the bug cannot show that the liveness search finds
// it.
//
// # The protocol
//
// Every node is a sender and a receiver. The application asks a node to
// send Count messages to a peer (SendMessages); the messages are numbered
// 1, 2, ... per node. A sender has at most one outgoing connection per
// peer. Sequence numbers count packets, not bytes: a node's k-th
// connection (k = 0, 1, ...) starts at ISN FirstISN + k·ISNSpacing (2001,
// 6001, ... as in the paper's figure), and each packet carries one
// message. There is no three-way handshake: the first packet carries the
// SYN flag, the ISN and the first message, and the sender sends nothing
// else until an ACK of the SYN establishes the connection; then every
// queued message goes out. The receiver takes a SYN as the start of a new
// incoming connection from that peer, replacing the one it had (unless it
// is a retransmission of the current connection's SYN). It delivers the
// packet it expects next (Next) to the application, ignores any other, and
// answers every packet with a cumulative ACK naming its connection's ISN
// and the last sequence number it accepted in order — so a packet out of
// sequence draws a duplicate ACK. A sender takes an ACK of its current
// connection as acknowledging everything up to its sequence number, and
// any ACK at all from the peer as a sign of life: the retry count starts
// again. The retransmission timer (one per peer, "rtx-nP") resends the
// oldest unacknowledged packet every Options.RetransmitTimeout; after
// Options.MaxRetries timeouts in a row without an ACK the connection is
// closed and the application gets an error, on which it resends every
// unacknowledged message on a new connection (a new ISN).
//
// # The bug (MaceMC Figure 4)
//
// DefaultOptions is the transport MaceMC checked. A sender sends "SYN
// 2001"; the packet (and its retransmissions) are delayed, the timeouts
// close the connection, and the application's resend opens "SYN 6001".
// Both are in flight. The receiver gets SYN 6001 first and answers "ACK
// 6001"; then the old SYN 2001 arrives and the receiver, taking it for a
// new connection, drops 6001 and opens 2001. The sender gets ACK 6001 —
// the critical transition, step 5 — and, believing the connection
// established, sends "DATA 6002". The receiver expects 2002: it ignores
// DATA 6002 and answers "ACK 2001", which the sender takes as a sign of
// life, so the connection never times out. The sender retransmits DATA
// 6002 forever and AllAcked never holds again. Before step 5 the sender
// could still retransmit SYN 6001 and resynchronise the receiver (the
// live path Mdb diffs against, Figure 3).
//
// The correction (Options.FixMonotoneSYN, "monotone-syn") is the paper's:
// a SYN carries a monotonically increasing connection identifier
// (MaceMC's MonotoneTime: the time in nanoseconds, or one more than the
// last identifier), and the receiver ignores a SYN whose identifier is no
// newer than its current connection's, answering with an ACK of what it
// has. The stale SYN 2001 is then ignored and DATA 6002 acknowledged.
//
// # Properties
//
// AllAcked (liveness, MaceMC's Table 1): eventually no node holds an
// unacknowledged message. The safety properties a transport must keep,
// judged on what a view holds: InOrderDelivery and NoDuplicateDelivery
// within a connection (a message resent on a new connection after an
// error may be delivered again: the application of the paper resends at
// least once), and DeliveredWasSent (on a connection both ends hold, the
// receiver accepted nothing the sender did not send). Receivers keep the
// last Options.DeliveredLog deliveries of each connection for them.
//
// The scripts in testdata replay Figure 4 step by step with and without
// the correction (package nodetest: "deliver n2 n1 N" picks which datagram
// in flight arrives next).
package macetransport
