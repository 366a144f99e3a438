package schema

// Built is the digest of the manifest whose mutants this program holds:
// empty in an ordinary build; the overlay of a mutant build replaces this
// file with one that sets it, and the runner checks it against the
// manifest it is given (a program built without the overlay, or with
// another corpus's, would run the wrong code under a mutant's name).
var Built = ""
