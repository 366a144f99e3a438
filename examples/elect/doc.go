// Package elect is a Raft-style leader election with a planted stall that
// only a lasting fault shows: the fault model's test service for lasting
// crashes and partitions.
//
// # The protocol
//
// A cluster of n nodes (1..n) elects a leader by Raft's rules: a node
// whose election timer fires (after ElectionTimeout + (id-1)·Stagger)
// starts a new term, votes for itself and asks every peer (RequestVote);
// a node grants one vote a term (Vote), and resets its election timer when
// it grants; a candidate with a majority of votes leads and sends a
// Heartbeat every HeartbeatEvery, which keeps the others following it; a
// deposed leader learns of a newer term from a vote or a Stale answer to
// its heartbeat. A follower that follows a leader ignores other
// candidates until its election timer fires (Raft's guard against
// disruptive servers). The term and the vote are kept on disk
// (node.Durable).
//
// # The bug and its correction
//
// The planted bug: a candidate decides only once every peer has answered,
// granted or refused, to tell a lost election from a slow one. A peer that
// never answers — crashed for good, or cut off by a partition that lasts
// — keeps every candidate waiting, while a majority is there to elect one:
// no leader, for as long as the fault lasts. Every fault of the older
// model ends: a reset node answers at once, a broken connection is opened
// again, a churned node comes back; so the bug stays hidden. The
// correction counts a majority at every vote.
//
// Safety: OneLeaderPerTerm (no bug here); liveness: LeaderElected (a
// leader that a majority of the cluster follows).
//
// # What finds it
//
// Random walks (check --strategy walk) with a lasting crash or isolation
// (consequence.Faults.Crashes, Partitions with CutIsolate) suspect
// LeaderElected, critical transition the fault (verdict C1); with resets
// and breaks instead, every walk recovers. An emulated run of three nodes
// (seed 1, whose leader at 20s is n3) with the schedule "at 20s crash 3"
// or "at 20s isolate 3" ends with no leader; the twin elects n1 or n2;
// churn that brings its nodes back before the end hides it
// (elect_test.go, cmd/elect's tests).
package elect
