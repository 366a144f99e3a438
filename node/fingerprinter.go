package node

// Fingerprinter is an optional method of a Service whose fingerprint is
// not the encoding of its state: a service whose state is an opaque
// object rebuilt by replaying its inputs (package node/replayed) keeps the
// inputs as its state, and two histories that leave the object in the
// same observable state must hash equal, or the explorer would never see a
// state twice.
//
// AppendFingerprint appends the service's part of the fingerprint
// encoding (State.AppendFingerprint, which Hash digests) to dst, in place
// of the canonical encoding of its exported fields; the checkpoint
// encoding (State.AppendCheckpoint) is unchanged. It must be canonical
// (equal observable states give equal bytes: AppendCanonical writes a Go
// value so), cover everything that decides the service's future
// behaviour (the explorer treats equal fingerprints as one state), be
// deterministic, read-only and safe to call concurrently on a value no
// one steps.
type Fingerprinter interface {
	AppendFingerprint(dst []byte) ([]byte, error)
}

// AppendCanonical appends the canonical msgpack encoding of v to dst, the
// one node states use: compact integers, struct fields in declaration
// order, the entries of every map sorted by encoded key. Equal values give
// equal bytes whatever order Go iterated their maps in.
func AppendCanonical(dst []byte, v any) ([]byte, error) {
	return encodeCanonical(dst, v)
}
