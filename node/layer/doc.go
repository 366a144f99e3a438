// Package layer is the shells' side of a node: the Layer port that the
// snapshot and steering layers implement (with its optional Gate, Stopper,
// BreakObserver and Durable extensions and the Host it reads), and the
// Pipeline that runs a node.Core with its layers, written once for the
// live runtime and the emulator: the order of the hooks for one event,
// what a Gate's Verdict does (drop, break, postpone), how a postponed
// event comes back, and the durable records layers keep across a crash.
// The explorer takes the same Verdict from its event filters.
//
// A service author never imports it: package node is the service SDK
// (Service, Env, Message, Spec), and this package is what hosts and
// layers are built from. Like node it does no I/O and reads no clock (make
// purity checks it); a Pipeline returns its effects as data (Outcome) for
// the shell to carry out.
package layer
