// Package violation holds List, the accumulator the services' property
// checks describe their violations with: a check adds one message per
// offending node, pair or connection, and returns List.Err, nil when it
// added none.
//
// The contract: a List is a plain value owned by one check. It starts no
// goroutine, reads no clock or random source, and holds nothing but the
// bytes it was given, so the same additions give the same error text —
// the messages in the order they were added, separated by "; ". Its zero
// value is empty and unbounded, and a check that adds nothing allocates
// nothing. A List made by Bounded describes only its first violations and
// counts the rest ("; and N more"), for checks the emulator evaluates in
// every step of a run that stays violated.
//
// The package is internal to services: production code of the services
// may import it, nothing outside services can.
package violation
