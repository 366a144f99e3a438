// Package resend is a retransmission bug: a sender that resends a message
// until it is acknowledged, and a receiver that drops a resent message by
// comparing it with the last one it applied only.
//
// # The protocol
//
// Node 1 sends the items 1..Items to node 2, one at a time: Data{Seq}, then
// the "resend" timer, which sends the current item again (at most Retries
// times per item; unbounded when Retries is negative) until node 2's
// Ack{Seq} arrives and node 1 moves on to the next item. Node 2 applies
// each item it receives and acknowledges it (again, for a copy).
//
// # The bug and its correction
//
// The planted bug: node 2 takes a Data for a copy only when its Seq equals
// the last Seq it applied. Over a FIFO connection that is enough — every
// copy of item 1 is sent before item 2 is (node 1 moves on only after an
// Ack, and then resends item 2) — so a copy of an item always arrives
// before the next item. The service declares its messages unreliable
// (node.Unreliable: lost, duplicated, overtaken by one later message), as
// a UDP-style transport delivers them: a resent Data{1} still in flight
// when Data{2} is sent, duplicated by the network or overtaken by Data{2},
// arrives after item 2 and is applied twice. The correction takes a Data
// for a copy when its Seq is at most the last one applied.
//
// Safety: AppliedOnce (node 2 applies no item twice).
//
// # What finds it
//
// With today's delivery (the declaration ignored, or the budgets zero)
// breadth-first search of the initial state finds nothing at any depth;
// with one duplicate (consequence.Faults.Duplicates) or one reordering
// (Faults.Reorders) it finds AppliedOnce violated; the emulator shows it
// at a duplication or reordering rate (emulation.DeliveryConfig) and not
// without one.
package resend
