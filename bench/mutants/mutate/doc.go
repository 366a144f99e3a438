// Package mutate makes the mutation corpus of bench/mutants: it parses a
// service package's handler code with go/ast, finds the sites where a
// mutation operator applies (Ops), selects a seeded, deterministic subset
// of them, and renders the package's files as a mutant schema — every
// selected mutant compiled into the same code behind a run-time switch
// (package schema) — as a go build -overlay of the package's files.
//
// Handler code is what a node runs on an event: the node.Service and
// node.Durable methods (Init, HandleMessage, HandleTimer, HandleApp,
// HandleTransportError, HandleSendRefused, Recover) and every function of
// the package they call, except the functions a property check, an
// encoding or a summary calls (a mutant keeps its original's properties
// and checkpoint format: only its behaviour changes).
//
// A mutant with ID i is its original with one site rewritten; in the
// schema that site reads schema.On(i) (or schema.Pick(i, …)), so with
// schema.Active = i the program runs mutant i and with 0 the original.
// Render(…, Direct(i)) writes the same mutant as plain code (the switch
// replaced by the constant true), which builds as a service of its own.
package mutate
