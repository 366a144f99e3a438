package kv

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"unsafe"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/tracker"
)

// raftInternals reaches the fields of raft's state machine that decide
// what it does next and that the library does not export: the election
// and heartbeat counters, the randomized election timeout (which raft
// draws from crypto/rand and the store replaces with a draw from
// Env.Rand, so that a run is a pure function of its seed), and the
// leader's pending transfer, its pending reads and the in-flight
// accounting of each follower.
//
// It reads them through reflection, resolved once by name and type
// against the library linked in (resolveInternals). A version of
// go.etcd.io/raft whose struct lacks one of them, or types it otherwise,
// fails at the first store built, with an error naming the field: the
// adapter never guesses at memory it has not checked. Writing is limited
// to randomizedElectionTimeout, an int raft reads only in
// pastElectionTimeout, and to a follower's electionElapsed when an image
// restores it.
type raftInternals struct {
	raftField                                   uintptr // RawNode.raft (*raft)
	electionElapsed, heartbeatElapsed           uintptr // raft's int counters
	randomizedElectionTimeout, electionTimeout  uintptr
	leadTransferee, pendingConfIndex            uintptr // uint64
	uncommittedSize                             uintptr // uint64 kind
	readOnly                                    reflect.StructField
	pendingReadIndexMessages                    reflect.StructField
	progressSentCommit, inflightsBytes          reflect.StructField
	unconfirmedReads, readOnlyAcks, confirmed   reflect.StructField
	readOnlyStruct, rawNodeType, raftStructType reflect.Type
}

var internals, internalsErr = resolveInternals()

// resolveInternals finds the fields raftInternals reads in the linked
// library and checks their kinds.
func resolveInternals() (*raftInternals, error) {
	in := &raftInternals{rawNodeType: reflect.TypeFor[raft.RawNode]()}
	rf, ok := in.rawNodeType.FieldByName("raft")
	if !ok || rf.Type.Kind() != reflect.Pointer || rf.Type.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("etcdkv: this go.etcd.io/raft has no RawNode.raft of a struct pointer type")
	}
	in.raftField, in.raftStructType = rf.Offset, rf.Type.Elem()
	var err error
	field := func(name string, kind reflect.Kind) uintptr {
		f, ok := in.raftStructType.FieldByName(name)
		if (!ok || f.Type.Kind() != kind) && err == nil {
			err = fmt.Errorf("etcdkv: this go.etcd.io/raft has no raft.%s of kind %v", name, kind)
		}
		return f.Offset
	}
	in.electionElapsed = field("electionElapsed", reflect.Int)
	in.heartbeatElapsed = field("heartbeatElapsed", reflect.Int)
	in.randomizedElectionTimeout = field("randomizedElectionTimeout", reflect.Int)
	in.electionTimeout = field("electionTimeout", reflect.Int)
	in.leadTransferee = field("leadTransferee", reflect.Uint64)
	in.pendingConfIndex = field("pendingConfIndex", reflect.Uint64)
	in.uncommittedSize = field("uncommittedSize", reflect.Uint64)
	structField := func(t reflect.Type, name string, kind reflect.Kind) reflect.StructField {
		f, ok := t.FieldByName(name)
		if (!ok || f.Type.Kind() != kind) && err == nil {
			err = fmt.Errorf("etcdkv: this go.etcd.io/raft has no %v.%s of kind %v", t, name, kind)
		}
		return f
	}
	in.readOnly = structField(in.raftStructType, "readOnly", reflect.Pointer)
	in.pendingReadIndexMessages = structField(in.raftStructType, "pendingReadIndexMessages", reflect.Slice)
	in.progressSentCommit = structField(reflect.TypeFor[tracker.Progress](), "sentCommit", reflect.Uint64)
	in.inflightsBytes = structField(reflect.TypeFor[tracker.Inflights](), "bytes", reflect.Uint64)
	if err != nil {
		return nil, err
	}
	in.readOnlyStruct = in.readOnly.Type.Elem()
	in.unconfirmedReads = structField(in.readOnlyStruct, "unconfirmedReads", reflect.Slice)
	in.readOnlyAcks = structField(in.readOnlyStruct, "acks", reflect.Map)
	in.confirmed = structField(in.readOnlyStruct, "confirmedReads", reflect.Uint64)
	return in, err
}

// raftOf is the address of rn's raft struct.
func (in *raftInternals) raftOf(rn *raft.RawNode) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(rn), in.raftField))
}

func (in *raftInternals) intAt(rn *raft.RawNode, off uintptr) int {
	return *(*int)(unsafe.Add(in.raftOf(rn), off))
}

func (in *raftInternals) uint64At(rn *raft.RawNode, off uintptr) uint64 {
	return *(*uint64)(unsafe.Add(in.raftOf(rn), off))
}

// setRandomizedElectionTimeout replaces raft's draw.
func (in *raftInternals) setRandomizedElectionTimeout(rn *raft.RawNode, ticks int) {
	*(*int)(unsafe.Add(in.raftOf(rn), in.randomizedElectionTimeout)) = ticks
}

// setElectionElapsed restores a follower's election counter (an image's).
func (in *raftInternals) setElectionElapsed(rn *raft.RawNode, ticks int) {
	*(*int)(unsafe.Add(in.raftOf(rn), in.electionElapsed)) = ticks
}

// hidden is what raftInternals reads of one RawNode.
type hidden struct {
	ElectionElapsed, HeartbeatElapsed, RandomizedElectionTimeout int
	LeadTransferee, PendingConfIndex, UncommittedSize            uint64
	// PendingReads counts the ReadIndex requests a leader has not
	// confirmed yet and those it holds until it commits in its term;
	// ReadAcks the heartbeat answers counted for the oldest; Confirmed
	// the requests it has confirmed since it was built.
	PendingReads, HeldReads, ReadAcks int
	Confirmed                         uint64
	// AcksAhead are the read acknowledgements past Confirmed, by node:
	// which nodes have acknowledged how many of the pending reads decides
	// which a later answer confirms once more than two voters are needed.
	// Acknowledgements at or below Confirmed make no difference. (In a
	// three-node cluster only the leader's own is ever ahead, a function
	// of PendingReads.)
	AcksAhead []ReadAck `msgpack:",omitempty"`
}

// ReadAck is a node's acknowledgement of the pending reads: Ahead of
// them, counted from the last confirmed.
type ReadAck struct {
	ID, Ahead uint64
}

// read returns rn's hidden state.
func (in *raftInternals) read(rn *raft.RawNode) hidden {
	h := hidden{
		ElectionElapsed:           in.intAt(rn, in.electionElapsed),
		HeartbeatElapsed:          in.intAt(rn, in.heartbeatElapsed),
		RandomizedElectionTimeout: in.intAt(rn, in.randomizedElectionTimeout),
		LeadTransferee:            in.uint64At(rn, in.leadTransferee),
		PendingConfIndex:          in.uint64At(rn, in.pendingConfIndex),
		UncommittedSize:           in.uint64At(rn, in.uncommittedSize),
	}
	r := reflect.NewAt(in.raftStructType, in.raftOf(rn)).Elem()
	h.HeldReads = r.FieldByIndex(in.pendingReadIndexMessages.Index).Len()
	if ro := r.FieldByIndex(in.readOnly.Index); !ro.IsNil() {
		ro = ro.Elem()
		h.PendingReads = ro.FieldByIndex(in.unconfirmedReads.Index).Len()
		acks := ro.FieldByIndex(in.readOnlyAcks.Index)
		h.ReadAcks = acks.Len()
		h.Confirmed = ro.FieldByIndex(in.confirmed.Index).Uint()
		for it := acks.MapRange(); it.Next(); {
			if v := it.Value().Uint(); v > h.Confirmed {
				h.AcksAhead = append(h.AcksAhead, ReadAck{ID: it.Key().Uint(), Ahead: v - h.Confirmed})
			}
		}
		slices.SortFunc(h.AcksAhead, func(a, b ReadAck) int { return cmp.Compare(a.ID, b.ID) })
	}
	return h
}

// sentCommit is the commit index a leader last sent to the follower pr
// describes (tracker.Progress keeps it unexported).
func (in *raftInternals) sentCommit(pr *tracker.Progress) uint64 {
	return reflect.ValueOf(pr).Elem().FieldByIndex(in.progressSentCommit.Index).Uint()
}

// inflightBytes is the bytes of entries in flight an Inflights counts.
func (in *raftInternals) inflightBytes(f *tracker.Inflights) uint64 {
	return reflect.ValueOf(f).Elem().FieldByIndex(in.inflightsBytes.Index).Uint()
}
