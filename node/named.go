package node

import "reflect"

// Named gives the message type T that embeds it its MessageType, derived
// from T's Go type: the package's name, a dot and the type's name
// ("randtree.Join" for type Join of package randtree), the convention the
// hand-written MessageType methods of the bundled services follow. A
// message is then written once, as a type, and registered once, in
// Spec.Messages; NewRegistry rejects two types that derive the same name
// (two packages of one name), which a hand-written MessageType resolves.
//
//	type Join struct {
//		node.Named[Join]
//		Joiner node.ID
//	}
//
// Named is an empty struct: msgpack inlines an embedded struct's fields,
// so it adds nothing to a message's encoding, its checkpoint bytes or its
// hash. The derived name changes when the type or its package is renamed,
// and it is what the wire carries: a service that must keep its names
// across such a rename writes MessageType by hand instead. Named[T] is
// safe for concurrent use and deterministic.
type Named[T any] struct{}

// MessageType returns T's package name and type name, "pkg.Type".
func (Named[T]) MessageType() string { return reflect.TypeFor[T]().String() }
