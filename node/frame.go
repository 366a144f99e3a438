package node

// FrameHeaderLen is the size of the header of a frame, the unit in which
// the live runtime (package live, which reads and writes them) carries an
// envelope on a TCP connection:
//
//	uint32 length (big endian) | uint32 CRC-32C of the payload | payload
//
// The length counts payload bytes only. A reader checks it against its
// maximum frame size before it allocates or reads the payload, and checks
// the checksum before anything decodes the payload, so a hostile or
// corrupted stream costs at most one maximum-size buffer and never reaches
// a decoder. It is here, not in live, because it is a fact of the wire the
// cores' size models share: the emulator's link model and the snapshot
// layer's account of a recorded message count it in a message's size.
const FrameHeaderLen = 8
