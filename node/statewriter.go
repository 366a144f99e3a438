package node

import "github.com/vmihailenco/msgpack/v5"

// StateWriter helps a service write its state's msgpack encoding by hand
// (a msgpack.CustomEncoder on the state): the explorer hashes and copies a
// node state on every transition, and reflection over slices of integers
// costs several times a direct encoding. The slice methods write exactly
// what msgpack's reflection writes for the same field with compact
// integers — nil as msgpack nil, else an array of unsigned integers — so
// the default decoder reads the result and a test can hold the encoder to
// reflection's bytes.
//
// A StateWriter keeps the first error and ignores every later write's, so
// an encoder reads as the field list it mirrors and returns Err once. The
// zero value is unusable: set Enc. It is a value for one EncodeMsgpack
// call, not for concurrent use.
type StateWriter struct {
	// Enc is the encoder EncodeMsgpack was given.
	Enc *msgpack.Encoder
	err error
}

// Check records err if it is the first error.
func (w *StateWriter) Check(err error) {
	if w.err == nil {
		w.err = err
	}
}

// Err returns the first error recorded, or nil.
func (w *StateWriter) Err() error { return w.err }

// IDs writes s as reflection writes a []ID.
func (w *StateWriter) IDs(s []ID) {
	if w.nilOrLen(s == nil, len(s)) {
		for _, v := range s {
			w.Check(w.Enc.EncodeUint(uint64(v)))
		}
	}
}

// Uint64s writes s as reflection writes a []uint64.
func (w *StateWriter) Uint64s(s []uint64) {
	if w.nilOrLen(s == nil, len(s)) {
		for _, v := range s {
			w.Check(w.Enc.EncodeUint(v))
		}
	}
}

// Uint32s writes s as reflection writes a []uint32.
func (w *StateWriter) Uint32s(s []uint32) {
	if w.nilOrLen(s == nil, len(s)) {
		for _, v := range s {
			w.Check(w.Enc.EncodeUint(uint64(v)))
		}
	}
}

// nilOrLen writes msgpack nil for a nil slice (and reports false), else
// the array header of n elements (and reports true).
func (w *StateWriter) nilOrLen(isNil bool, n int) bool {
	if isNil {
		w.Check(w.Enc.EncodeNil())
		return false
	}
	w.Check(w.Enc.EncodeArrayLen(n))
	return true
}
