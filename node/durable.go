package node

// Durable is an optional method of a Service whose state lives partly on
// stable storage: the part a real node writes to disk before acting on it
// and finds again after a crash (Paxos acceptors keep their promise and
// accepted value this way). Without it, a reset loses the whole service
// state.
//
// On EventReset the core builds the fresh value from the factory and, before
// Init, calls fresh.Recover(previous) with the service value the node had
// when it went down, so the fresh value can copy the fields it keeps on
// disk. Recover must copy, not alias, mutable memory (slices, maps,
// pointers) of previous: previous still belongs to whoever held the state
// before the reset (a shell may keep it, as a checkpoint or as the node
// state of another global state), and the new incarnation must not write
// into it. It must be deterministic, like a handler, and it has no Env:
// it restores state, and any action on the world belongs in Init, which
// runs right after it. EventInit (a first start) has no previous value and
// does not call it.
//
// Resets are modelled where a Core steps EventReset: in the emulator and in
// the explorer. The live Runtime never resets a core (a restarted process
// starts a new one), so a deployed Durable service still has to write its
// durable fields to disk itself.
type Durable interface {
	Recover(previous Service)
}
