package snapshot

import (
	"errors"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The snapshot protocol's messages. They are node.Messages with stable type
// names, encoded as msgpack arrays (field order is the wire format), travel on the same FIFO channels as the service's messages, carry
// the sender's checkpoint number in node.Envelope.CN like every other
// message, and are consumed by the Manager (never handed to the service).
// A live shell registers them next to the service's messages (Messages).

// Request asks the receiver for its checkpoint of cut CR. Gather identifies
// the requester's gather round; Members is the round's neighbourhood
// (requester included, ascending): the receiver records the channels from
// each member and sends each member other than the requester a Marker.
type Request struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	Gather   uint64
	CR       uint64
	Members  []node.ID
}

// MessageType implements node.Message.
func (Request) MessageType() string { return "snapshot.Request" }

// LayerMessage marks a snapshot protocol message (layer.Message).
func (Request) LayerMessage() {}

// Marker closes the channel it travels on for every cut up to its envelope's
// CN: it carries no data of its own.
type Marker struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	Gather   uint64
}

// MessageType implements node.Message.
func (Marker) MessageType() string { return "snapshot.Marker" }

// LayerMessage marks a snapshot protocol message (layer.Message).
func (Marker) LayerMessage() {}

// Encodings of Response.State.
const (
	// EncodingRaw: State is the checkpoint as is.
	EncodingRaw uint8 = iota
	// EncodingZstd: State is one zstd frame of the checkpoint.
	EncodingZstd
	// EncodingDelta: State is one zstd frame compressed with the checkpoint
	// whose xxh3 hash is Base (one the requester acknowledged) as a raw
	// dictionary.
	EncodingDelta
	// EncodingSame: the checkpoint is identical to Base; State is empty.
	EncodingSame
)

// Response is the positive answer to a Request: the responder's checkpoint
// of cut CR (its earliest stored checkpoint whose number CN ≥ CR) and the
// channel state recorded after it, one record per member of the request.
type Response struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	Gather   uint64
	CR       uint64
	// CN is the number of the checkpoint sent.
	CN uint64
	// Encoding says how State encodes the checkpoint (EncodingRaw...).
	Encoding uint8
	// Base is the xxh3 hash of the dictionary checkpoint (EncodingDelta,
	// EncodingSame); zero otherwise.
	Base uint64
	// Hash is the xxh3 hash of the raw checkpoint; RawLen its length.
	Hash   uint64
	RawLen uint32
	State  []byte
	// Channels has one record per request member, ascending by From.
	Channels []ChannelRecord
	// Peers are the nodes the responder exchanged messages with within its
	// RecentWindow when it answered, ascending, at most MaxRecordedPeers
	// (NodeCheckpoint.Peers). Appended last: a responder that predates it
	// sends none, which reads as "no peer known".
	Peers []node.ID
}

// MessageType implements node.Message.
func (Response) MessageType() string { return "snapshot.Response" }

// LayerMessage marks a snapshot protocol message (layer.Message).
func (Response) LayerMessage() {}

// Channel record flags.
const (
	// FlagComplete: the channel closed (a message with CN ≥ CR arrived on it
	// after the checkpoint), so Msgs is the whole in-flight set.
	FlagComplete uint8 = 1 << iota
	// FlagLossy: in-flight messages may have been lost on the way (a
	// transport error about the sender, or a reset of the responder, with
	// nothing from the sender since; see the package documentation).
	FlagLossy
)

// ChannelRecord is the recorded state of the channel From → responder.
type ChannelRecord struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	From     node.ID
	Flags    uint8
	Msgs     []Recorded
}

// Recorded is one recorded in-flight message: its envelope CN, its
// registered type name and its msgpack body.
type Recorded struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	CN       uint64
	Type     string
	Body     []byte
}

// Reasons of a Negative answer.
const (
	// ReasonPruned: the requested checkpoint is outside the stored range
	// (pruned by the quota, or lost in a reset). Retry at Negative.CN.
	ReasonPruned uint8 = iota + 1
	// ReasonBandwidth: answering would exceed the responder's bandwidth
	// cap. The requester leaves the node out of this snapshot.
	ReasonBandwidth
	// ReasonBusy: the responder records too many answers already.
	ReasonBusy
	// ReasonTooLarge: the checkpoint exceeds the responder's
	// Config.MaxCheckpointSize.
	ReasonTooLarge
	// ReasonWindow: the cut lies beyond what the responder may adopt
	// (Config.CNWindow above Negative.CN, or the rate limit): a
	// gatherer all of whose members answer so is ahead of them all, and
	// rebases (see Config.CNWindow).
	ReasonWindow
)

// Negative is a refused Request, carrying the responder's current
// checkpoint number.
type Negative struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	Gather   uint64
	CR       uint64
	CN       uint64
	Reason   uint8
}

// MessageType implements node.Message.
func (Negative) MessageType() string { return "snapshot.Negative" }

// LayerMessage marks a snapshot protocol message (layer.Message).
func (Negative) LayerMessage() {}

// Ack acknowledges the checkpoint with xxh3 hash Hash received in a
// Response: the responder may use it as the base of its next delta to the
// acknowledging node. An Ack of a hash the responder did not send (Hash 0:
// the requester could not decode an answer, e.g. because it restarted and
// lost its bases) withdraws the base: the next answer is not a delta.
type Ack struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	Gather   uint64
	Hash     uint64
}

// MessageType implements node.Message.
func (Ack) MessageType() string { return "snapshot.Ack" }

// LayerMessage marks a snapshot protocol message (layer.Message).
func (Ack) LayerMessage() {}

// Messages returns prototypes of the protocol's messages, for a shell's
// registry (alongside the service's Spec.Messages).
func Messages() []node.Message {
	return []node.Message{Request{}, Marker{}, Response{}, Negative{}, Ack{}}
}

// IsProtocol reports whether m is one of the snapshot protocol's messages
// (which a shell hands to the Manager, never to the service).
func IsProtocol(m node.Message) bool {
	switch m.(type) {
	case Request, Marker, Response, Negative, Ack:
		return true
	}
	return false
}

// ErrBadMessage is wrapped by every error about a malformed or
// out-of-bounds protocol message or checkpoint payload from a peer.
var ErrBadMessage = errors.New("snapshot: bad protocol message")

var protoRegistry = func() *node.Registry {
	r, err := node.NewRegistry(Messages()...)
	if err != nil {
		panic(err)
	}
	return r
}()

// DecodeResponse decodes the msgpack body of a snapshot.Response and checks
// its bounds: maxCheckpoint caps RawLen and the payload, MaxMembers the
// channel records, MaxRecorded the messages per record. body is untrusted:
// length headers are checked before anything is allocated (node.CheckMsgpack),
// so hostile input gives an error wrapping ErrBadMessage, never a panic or
// an allocation beyond O(len(body)). The result does not alias body. The
// checkpoint payload itself is decompressed separately, with a capped
// decoder (Manager does it on receipt).
func DecodeResponse(body []byte, maxCheckpoint int) (Response, error) {
	m, err := protoRegistry.DecodeMessage(Response{}.MessageType(), body)
	if err != nil {
		return Response{}, fmt.Errorf("%w: %w", ErrBadMessage, err)
	}
	r := m.(Response)
	if err := r.validate(maxCheckpoint); err != nil {
		return Response{}, err
	}
	return r, nil
}

// validate checks a Response's fields against the wire bounds, section by
// section in wire order: the header, the encoding, the peers, the channel
// records (the first fault found is the one reported).
func (r *Response) validate(maxCheckpoint int) error {
	if err := r.validateHeader(maxCheckpoint); err != nil {
		return err
	}
	if err := r.validateEncoding(); err != nil {
		return err
	}
	if err := r.validatePeers(); err != nil {
		return err
	}
	return r.validateChannels()
}

// badResponse is the error about a malformed Response, wrapping
// ErrBadMessage.
func badResponse(format string, args ...any) error {
	return fmt.Errorf("%w: response: "+format, append([]any{ErrBadMessage}, args...)...)
}

// validateHeader checks the declared checkpoint size, the payload size and
// that the checkpoint number answers the cut.
func (r *Response) validateHeader(maxCheckpoint int) error {
	if int64(r.RawLen) > int64(maxCheckpoint) {
		return badResponse("checkpoint of %d bytes exceeds the %d-byte cap", r.RawLen, maxCheckpoint)
	}
	if len(r.State) > maxCheckpoint+1024 {
		return badResponse("payload of %d bytes exceeds the cap", len(r.State))
	}
	if r.CN < r.CR || r.CR == 0 {
		return badResponse("checkpoint %d does not answer cut %d", r.CN, r.CR)
	}
	return nil
}

// encodingChecks holds, per known encoding, the check that the header is
// consistent with it (nil: nothing to check).
var encodingChecks = map[uint8]func(*Response) error{
	EncodingRaw:   (*Response).checkRawLength,
	EncodingZstd:  nil,
	EncodingDelta: (*Response).checkDeltaBase,
	EncodingSame:  (*Response).checkUnchanged,
}

// validateEncoding checks that the encoding is known and the header
// consistent with it.
func (r *Response) validateEncoding() error {
	check, known := encodingChecks[r.Encoding]
	if !known {
		return badResponse("unknown encoding %d", r.Encoding)
	}
	if check == nil {
		return nil
	}
	return check(r)
}

// checkRawLength checks that a raw payload is as long as the header says.
func (r *Response) checkRawLength() error {
	if len(r.State) != int(r.RawLen) {
		return badResponse("raw payload of %d bytes, header says %d", len(r.State), r.RawLen)
	}
	return nil
}

// checkDeltaBase checks that a delta names its base.
func (r *Response) checkDeltaBase() error {
	if r.Base == 0 {
		return badResponse("delta without a base")
	}
	return nil
}

// checkUnchanged checks that an unchanged-checkpoint answer names a base
// equal to the checkpoint and carries no payload.
func (r *Response) checkUnchanged() error {
	if r.Base == 0 || r.Base != r.Hash || len(r.State) != 0 {
		return badResponse("inconsistent unchanged-checkpoint answer")
	}
	return nil
}

// validatePeers checks the number and the order of the responder's peers.
func (r *Response) validatePeers() error {
	if len(r.Peers) > MaxRecordedPeers {
		return badResponse("%d peers, more than %d", len(r.Peers), MaxRecordedPeers)
	}
	if !ascendingIDs(r.Peers) {
		return badResponse("peers not ascending")
	}
	return nil
}

// ascendingIDs reports whether ids are real node IDs (never node.None, the
// zero ID) in strictly ascending order, as the wire requires of ID lists.
func ascendingIDs(ids []node.ID) bool {
	prev := node.None
	for _, id := range ids {
		if id <= prev {
			return false
		}
		prev = id
	}
	return true
}

// validateChannels checks the number of channel records, then each record
// in order.
func (r *Response) validateChannels() error {
	if len(r.Channels) > MaxMembers {
		return badResponse("%d channel records", len(r.Channels))
	}
	prev := node.None
	for i := range r.Channels {
		if err := r.validateChannel(&r.Channels[i], prev); err != nil {
			return err
		}
		prev = r.Channels[i].From
	}
	return nil
}

// validateChannel checks one channel record: its sender above prev (the
// previous record's, node.None for the first), its flags and its recorded
// messages.
func (r *Response) validateChannel(ch *ChannelRecord, prev node.ID) error {
	if ch.From <= prev {
		return badResponse("channel records not ascending by sender")
	}
	if ch.Flags&^(FlagComplete|FlagLossy) != 0 {
		return badResponse("unknown channel flags %#x", ch.Flags)
	}
	if len(ch.Msgs) > MaxRecorded {
		return badResponse("%d recorded messages from %v", len(ch.Msgs), ch.From)
	}
	return r.validateRecorded(ch.Msgs)
}

// validateRecorded checks recorded messages' type names and that each was
// sent before the cut.
func (r *Response) validateRecorded(msgs []Recorded) error {
	for _, m := range msgs {
		if m.Type == "" || len(m.Type) > node.MaxTypeNameLen {
			return badResponse("recorded message type name of %d bytes", len(m.Type))
		}
		if m.CN >= r.CR {
			return badResponse("recorded message with CN %d ≥ cut %d", m.CN, r.CR)
		}
	}
	return nil
}

// validateRequest checks a Request's bounds.
func validateRequest(r *Request) error {
	if r.CR == 0 || r.CR > MaxCN {
		return fmt.Errorf("%w: request for cut %d", ErrBadMessage, r.CR)
	}
	if len(r.Members) > MaxMembers {
		return fmt.Errorf("%w: request names %d members", ErrBadMessage, len(r.Members))
	}
	if !ascendingIDs(r.Members) {
		return fmt.Errorf("%w: request members not ascending", ErrBadMessage)
	}
	return nil
}
