package node

import (
	"fmt"
	"strconv"
)

// ID identifies a node. IDs are ordered numerically, as the paper orders IP
// addresses (RandTree's root is the node with the smallest ID). The zero ID
// means "no node" and is never assigned to a running node.
type ID uint64

// None is the zero ID: no node.
const None ID = 0

// String renders an ID as the paper writes it: n13.
func (id ID) String() string {
	if id == None {
		return "none"
	}
	return "n" + strconv.FormatUint(uint64(id), 10)
}

// ParseID parses "13" or "n13".
func ParseID(s string) (ID, error) {
	t := s
	if len(t) > 0 && (t[0] == 'n' || t[0] == 'N') {
		t = t[1:]
	}
	v, err := strconv.ParseUint(t, 10, 64)
	if err != nil || v == 0 {
		return None, fmt.Errorf("node: invalid node ID %q: want a positive integer such as 13 or n13", s)
	}
	return ID(v), nil
}
