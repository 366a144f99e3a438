// Package meter is the bug zoo's datagram loss and partition: usage
// metering over datagrams, with resends.
//
// # The protocol
//
// Node Server bills usage; every other node is a client that reports one
// unit every ReportEvery as a datagram (Report, numbered by the client),
// one report at a time, and sends it again every ResendAfter until the
// server's Ack (a datagram too) arrives. The server's accounts and the
// clients' report numbers are on disk.
//
// # The bug and its correction
//
// The planted bug: the server bills every report that arrives. When an
// Ack is lost — to the network, or to a partition cut between the report
// and its Ack — the client sends the report again and the server bills
// the same unit twice. The correction bills each report number of a
// client once, and acknowledges a duplicate again (its first Ack may be
// the one that was lost).
//
// Safety: NoDoubleBilling (the server never bills a client more units
// than the client reported); liveness: ReportsAcknowledged.
//
// # What finds it
//
// In emulation the bug needs loss or a partition: with the wide-area
// defaults (0.1–0.5% loss per link) six of six seeds bill twice within
// two minutes, with no loss none of four does (the round trip is shorter
// than ResendAfter); on a lossless network, cutting the server off from
// its clients for 5 s loses the Acks in flight, and 7 of seeds 1–12 bill
// twice right after the heal (TestPartitionBillsTwice). The
// explorer delays a datagram as long as it likes, and fires timers in any
// order, so it needs no drop: from the server and one client,
// breadth-first search finds NoDoubleBilling violated at depth 4, with or
// without Faults.Drops:
//
//	n2 timer report; n1 deliver-datagram Report from n2; n2 timer resend;
//	n1 deliver-datagram Report from n2
//
// A virtual clock will not change that while message latency is not part
// of the model: a late Ack and a lost one look the same to the client,
// which is why the correction does not rely on either. The fixed twin has
// no violation within depth 12 with one drop.
package meter
