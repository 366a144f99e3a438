package live

import (
	"errors"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Classes of errors the transport and the runtime tell apart by their
// sentinels.

// isAnyOf reports whether err wraps any of targets (errors.Is).
func isAnyOf(err error, targets ...error) bool {
	return slices.ContainsFunc(targets, func(t error) bool { return errors.Is(err, t) })
}

// peerFaults are the errors that blame what a peer sent: a bad or
// oversized frame, an envelope that does not decode, an unknown message
// type, a failed handshake.
var peerFaults = []error{ErrBadFrame, node.ErrBadEnvelope, node.ErrUnknownMessageType, ErrHandshake}

// isPeerFault reports whether err is caused by what the peer sent
// (peerFaults): counted in Counters.FramesRejected, logged as a warning.
func isPeerFault(err error) bool { return isAnyOf(err, peerFaults...) }
