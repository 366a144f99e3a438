package snapshot

import (
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Snapshot is a gathered consistent neighbourhood snapshot: for cut CN, the
// checkpoint of every included node and the state of every channel between
// them. See the package documentation for its consistency guarantee.
//
// A Snapshot is immutable once returned and shares no memory with the
// Manager that produced it, except checkpoint byte slices, which nobody
// modifies (treat them as read-only).
type Snapshot struct {
	// Gatherer is the node that gathered it; Gather the ID of its final
	// round (unique per gatherer).
	Gatherer node.ID
	Gather   uint64
	// CN is the cut number: every included node's checkpoint is the earliest
	// it took with a number ≥ CN, i.e. its state at the moment its
	// checkpoint number first reached CN.
	CN uint64
	// Started is when the gather began, At when it completed; Rounds how
	// many rounds it took (retries and restarts included).
	Started, At time.Time
	Rounds      int
	// Nodes are the included nodes' checkpoints, ascending by node,
	// gatherer included.
	Nodes []NodeCheckpoint
	// Channels has one entry per ordered pair (From, To) of included nodes,
	// self-loops included, ascending by (To, From).
	Channels []Channel
	// Dead are members left out because of a communication error or a
	// timeout; Excluded are members left out for another reason (a
	// bandwidth refusal, a checkpoint outside every retried range, a
	// malformed answer). Both ascending.
	Dead     []node.ID
	Excluded []Exclusion
}

// NodeCheckpoint is one node's checkpoint in a Snapshot.
type NodeCheckpoint struct {
	Node node.ID
	// CN is the checkpoint's own number (≥ the snapshot's CN: a node whose
	// number jumped past the cut answers with the checkpoint of the jump).
	CN uint64
	// State is the node state's checkpoint encoding (node.DecodeCheckpoint
	// restores it). Read-only.
	State []byte
	// Peers are the nodes this node exchanged messages with within its
	// RecentWindow when it answered (the gatherer: when it finished),
	// ascending, at most MaxRecordedPeers — members or not. A peer that is
	// not a member is a node the snapshot cannot model although this node
	// deals with it: a verdict that this node waits for ever may be wrong
	// (package steering marks such liveness dead ends open). Read-only.
	Peers []node.ID
}

// Channel is the recorded state of the FIFO channel From → To at the cut:
// the messages From sent before its checkpoint that To received after its
// own, in delivery order.
type Channel struct {
	From, To node.ID
	// Messages are the in-flight messages, oldest first (To is the
	// receiver, CN the sender's number when it sent each).
	Messages []node.Envelope
	// Complete is set when the channel closed before To answered (a message
	// with CN ≥ the cut arrived on it), so Messages is the whole in-flight
	// set; otherwise Messages is a prefix of it.
	Complete bool
	// Lossy is set when messages in flight at the cut may have been lost by
	// the network (To learned of a broken connection to From, or reset,
	// with nothing from From since, before or after its checkpoint);
	// Messages holds those that arrived.
	Lossy bool
}

// Exclusion is a member left out of a snapshot and why.
type Exclusion struct {
	Node   node.ID
	Reason string
}

// Reason says why a checkpoint was taken.
type Reason uint8

// The reasons a checkpoint is taken (each advances the checkpoint number).
const (
	// CheckpointPeriodic: the periodic increment.
	CheckpointPeriodic Reason = iota + 1
	// CheckpointForced: a message with a larger number arrived; the
	// checkpoint is of the state before that message is handled.
	CheckpointForced
	// CheckpointRequested: a request (or this node's own gather) asked for a
	// cut beyond the current number.
	CheckpointRequested
)

// String names the reason.
func (r Reason) String() string {
	if name, ok := reasonNames[r]; ok {
		return name
	}
	return "reason(?)"
}

// reasonNames names the reasons a checkpoint is taken (Reason.String).
var reasonNames = map[Reason]string{
	CheckpointPeriodic:  "periodic",
	CheckpointForced:    "forced",
	CheckpointRequested: "requested",
}

// Taken reports one checkpoint taken during a Manager call.
type Taken struct {
	CN     uint64
	Reason Reason
	// Size is the checkpoint's raw size in bytes; Hash its xxh3-64 hash
	// (the name the protocol gives it).
	Size int
	Hash uint64
}

// Failure reports a gather given up after Config.MaxRounds rounds, aborted
// by a reset, ended with no member but the gatherer (FailureNoMember), or
// impossible at MaxCN (FailureExhausted).
type Failure struct {
	Gather uint64
	Rounds int
	Reason string
}

// Effects are what one Manager call asks the shell to do or report. The
// slices belong to the Manager and stay valid until its next call: carry
// them out (or copy them) first.
type Effects struct {
	// Sends are protocol messages to transmit, in order, already stamped
	// with the checkpoint number. The shell sends them like service
	// messages, on the same channels.
	Sends []node.Envelope
	// Taken lists the checkpoints taken, in order.
	Taken []Taken
	// Snapshots are gathers completed at this node.
	Snapshots []*Snapshot
	// Failures are gathers given up.
	Failures []Failure
}

// Stats counts what a Manager did. All counters are cumulative.
type Stats struct {
	// CN is the current checkpoint number.
	CN uint64 `json:"cn"`
	// Checkpoints taken, by reason.
	Periodic  int64 `json:"periodic"`
	Forced    int64 `json:"forced"`
	Requested int64 `json:"requested"`
	// Stored is the number of stored checkpoints, StoredBytes their cost
	// against the quota (log included); Pruned counts checkpoints dropped
	// by the quota.
	Stored      int   `json:"stored"`
	StoredBytes int   `json:"stored_bytes"`
	Pruned      int64 `json:"pruned"`
	// Requests answered positively (Responses), negatively (Negatives, of
	// which NegativeBandwidth for the bandwidth cap).
	Requests          int64 `json:"requests"`
	Responses         int64 `json:"responses"`
	Negatives         int64 `json:"negatives"`
	NegativeBandwidth int64 `json:"negative_bandwidth"`
	// ResponseBytes is the approximate wire size of the responses sent;
	// StateBytes the checkpoint payload bytes in them, RawStateBytes the
	// raw size of the checkpoints they carried; Unchanged counts answers
	// that sent no payload (identical to the acknowledged base) and Deltas
	// those compressed against a base.
	ResponseBytes int64 `json:"response_bytes"`
	StateBytes    int64 `json:"state_bytes"`
	RawStateBytes int64 `json:"raw_state_bytes"`
	Unchanged     int64 `json:"unchanged"`
	Deltas        int64 `json:"deltas"`
	// ServiceBytes is the service traffic reported to Sent.
	ServiceBytes int64 `json:"service_bytes"`
	// Gathers completed, failed, and rounds started.
	Gathers       int64 `json:"gathers"`
	GathersFailed int64 `json:"gathers_failed"`
	Rounds        int64 `json:"rounds"`
	// BadMessages counts malformed or out-of-bounds protocol messages.
	BadMessages int64 `json:"bad_messages"`
	// Resyncs counts answers against a base this node no longer held
	// (after its restart): the member was asked again in full.
	Resyncs int64 `json:"resyncs"`
	// CNRejected counts checkpoint numbers from peers (an envelope's CN, a
	// Request's cut, a Negative's number) not adopted because they lay
	// beyond Config.CNWindow above the node's number (an envelope's CN
	// above MaxCN counts in BadMessages too); CNCaughtUp counts the jumps
	// beyond the window that two distinct witnesses agreed on (see
	// Config.CNWindow); CNUnvouched the numbers beyond the window from
	// peers a WitnessHost does not vouch for, which claim nothing.
	CNRejected  int64 `json:"cn_rejected"`
	CNCaughtUp  int64 `json:"cn_caught_up"`
	CNUnvouched int64 `json:"cn_unvouched"`
	// CNLimited counts the numbers from peers within the window that the
	// rate limit (Config.CNWindow per Interval) cut to what it allowed;
	// CNWentBack the messages whose number went back on their channel
	// (the sender restarted or rebased), each handled as a transport
	// error about the sender; Rebased the times this node, its gathers
	// refused by every member for a cut beyond their windows, moved its
	// numbering back to theirs (see Config.CNWindow).
	CNLimited  int64 `json:"cn_limited,omitempty"`
	CNWentBack int64 `json:"cn_went_back,omitempty"`
	Rebased    int64 `json:"rebased,omitempty"`
	// Exhausted is set once the number reached MaxCN: it advances no
	// more, and every gather fails (FailureExhausted).
	Exhausted bool `json:"exhausted"`
}
