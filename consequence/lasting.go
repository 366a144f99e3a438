package consequence

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The lasting faults — crash-stops (crashstop.go), partitions
// (partition.go) and clock jumps (clockjump.go) — leave state that outlives
// the step that injected them: a node that stays down, links that stay
// cut, a clock that stays off. That state lives in one lastingState per
// global state, nil until a lasting fault happens, so that a search
// without them keeps its states, fingerprints and costs exactly.

// The action kinds of the lasting faults. Their values stand apart from
// the other kinds' (which count up from ActDeliver), so the two lists can
// grow independently.
const (
	// ActCrash crash-stops Node (within Faults.Crashes): a local action
	// and a fault of the node, which must be up.
	ActCrash ActorActionKind = 32 + iota
	// ActRestart restarts Node, down since its crash, once Faults.Downtime
	// of virtual time has passed (a timer of the down node's, for the
	// virtual clock).
	ActRestart
	// ActPartition puts the partition Cut (with Node, Peer and Side) in
	// place, within Faults.Partitions: a local action and a fault of Node.
	ActPartition
	// ActHeal removes the partition in place once Faults.PartitionLength
	// of virtual time has passed: a local action of the partition's Node.
	ActHeal
	// ActClockJump moves Node's clock (Env.Now) forward by
	// Faults.ClockJump, or back if Back is set, within Faults.ClockJumps.
	ActClockJump
)

// DefaultClockJump is the size of a clock jump when Faults.ClockJump is
// zero: a step a late NTP correction or a paused virtual machine makes,
// well beyond the skew bound and below the leases and timeouts of most
// protocols.
const DefaultClockJump = 10 * time.Second

// Fingerprint tags of the lasting faults' components, apart from the
// others' (globalstate.go).
const (
	tagLasting = 64 + iota
	tagDown
	tagHeal
	tagLastingLocal
)

// IsFault reports whether actions of kind k are faults the explorer
// injects (resets, breaks, dropped datagrams, refused sends, crashes and
// restarts, partitions and heals, clock jumps) rather than a handler's
// events: what Action.Fault says of an action of the actor model.
func (k ActorActionKind) IsFault() bool {
	switch k {
	case ActReset, ActBreak, ActDropDatagram, ActRefuse, ActLose, ActDuplicate, ActDeliverAhead, ActDelay,
		ActCrash, ActRestart, ActPartition, ActHeal, ActClockJump:
		return true
	}
	return false
}

// lasting reports whether f explores any lasting fault.
func (f Faults) lasting() bool { return f.Crashes > 0 || f.Partitions > 0 || f.ClockJumps > 0 }

// jump returns the size of a clock jump.
func (f Faults) jump() time.Duration {
	if f.ClockJump == 0 {
		return DefaultClockJump
	}
	return f.ClockJump
}

// validateLasting reports a lasting-fault budget the model cannot explore.
func (f Faults) validateLasting() error {
	switch {
	case f.Crashes < 0 || f.Partitions < 0 || f.ClockJumps < 0 || f.Crashes > 1<<20 || f.Partitions > 1<<20 || f.ClockJumps > 1<<20:
		return fmt.Errorf("%w: crash, partition and clock-jump budgets must be in 0..%d, got %d, %d, %d", ErrActorModel, 1<<20, f.Crashes, f.Partitions, f.ClockJumps)
	case f.Downtime < 0 || f.PartitionLength < 0 || f.ClockJump < 0:
		return fmt.Errorf("%w: negative downtime %v, partition length %v or clock jump %v", ErrActorModel, f.Downtime, f.PartitionLength, f.ClockJump)
	case f.PartitionKinds&^CutAll != 0:
		return fmt.Errorf("%w: unknown partition kinds %#x", ErrActorModel, uint8(f.PartitionKinds))
	}
	return nil
}

// lastingState is what the lasting faults left in a global state.
// Immutable once a state holds it; shared by the states derived from it.
type lastingState struct {
	// crashes, partitions and jumps count the faults spent along the
	// path; down the nodes down now.
	crashes, partitions, jumps, down int32
	// live holds the IDs of the nodes up, ascending, while down > 0: the
	// state's node.View lists only them.
	live []node.ID
	// cut is the partition in place (Kind zero: none) and cuts its
	// directed links (from, to), sorted.
	cut  ActorAction
	cuts []connKey
	// healAt is when the partition heals; zero: it lasts.
	healAt time.Time
	// offsets are the nodes' clock offsets by node index (Env.Now minus
	// the virtual clock); nil while no clock jumped.
	offsets []time.Duration
	// hash is the fingerprint component of all of the above but healAt,
	// which the clock component holds relative to its reference.
	hash node.Hash
}

// rehash sets x.hash from its contents.
func (x *lastingState) rehash() {
	buf := make([]byte, 0, 48+16*len(x.cuts)+8*len(x.offsets))
	for _, v := range []int32{x.crashes, x.partitions, x.jumps, x.down} {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(v))
	}
	buf = append(buf, byte(x.cut.Kind), byte(x.cut.Cut))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(x.cut.Node))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(x.cut.Peer))
	buf = binary.LittleEndian.AppendUint32(buf, x.cut.Side)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(x.cuts)))
	for _, c := range x.cuts {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(c.lo))
		buf = binary.LittleEndian.AppendUint64(buf, uint64(c.hi))
	}
	for _, o := range x.offsets {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(o))
	}
	r := xxh3.Hash128(buf)
	x.hash = mix(tagLasting, 0, 0, node.Hash{Hi: r.Hi, Lo: r.Lo})
}

// key is x's content key in an interner: its hash and its heal time.
func (x *lastingState) key() node.Hash {
	var buf [12]byte
	binary.LittleEndian.PutUint64(buf[:], uint64(x.healAt.Unix()))
	binary.LittleEndian.PutUint32(buf[8:], uint32(x.healAt.Nanosecond()))
	return mix(tagLasting, binary.LittleEndian.Uint64(buf[:8]), uint64(binary.LittleEndian.Uint32(buf[8:])), x.hash)
}

// healComponent is the heal time's part of the clock component, relative
// to ref; zero without a timed partition.
func healComponent(x *lastingState, ref time.Time) node.Hash {
	if x == nil || x.healAt.IsZero() {
		return node.Hash{}
	}
	return mix(tagHeal, uint64(x.healAt.Sub(ref)), 0, node.Hash{})
}

// lasting returns a copy of s's lasting state to change (a new one if it
// has none); setLasting installs it.
func (s *succ) lasting() *lastingState {
	if s.g.ext == nil {
		return &lastingState{}
	}
	x := *s.g.ext
	return &x
}

// setLasting installs x in the successor: it recomputes x's hash and the
// node list of the view and updates the fingerprint (and the clock
// component, when the heal time changed).
func (s *succ) setLasting(x *lastingState) {
	x.live = nil
	if x.down > 0 {
		x.live = make([]node.ID, 0, len(s.g.nodes))
		for i, n := range s.g.nodes {
			if !n.down {
				x.live = append(x.live, s.g.m.ids[i])
			}
		}
	}
	x.rehash()
	old := s.g.ext
	var oh node.Hash
	if old != nil {
		oh = old.hash
	}
	s.g.fp = xorHash(xorHash(s.g.fp, oh), x.hash)
	if m := s.g.m; !m.opts.AnyOrderTimers && (old == nil || !old.healAt.Equal(x.healAt)) {
		ref, _ := m.clockRef(s.g)
		h := xorHash(healComponent(old, ref), healComponent(x, ref))
		s.g.clockH = xorHash(s.g.clockH, h)
		s.g.fp = xorHash(s.g.fp, h)
	}
	s.g.ext = x
}

// setDown replaces node i by its down form n (or its restarted form) and
// installs x with the down count adjusted by delta.
func (s *succ) setDown(i int, n *actorNode, x *lastingState, delta int32) {
	old := s.g.nodes[i]
	s.setNode(i, n)
	s.g.m.setClock(s, i, old)
	x.down += delta
	s.setLasting(x)
}

// lastingLocal mixes what the lasting faults left into node i's local
// fingerprint h: the whole lasting state (a crash anywhere, a cut link or
// a jumped clock changes what every node's local actions lead to) and,
// for the node whose partition it is, whether its heal may happen.
func (m *ActorModel) lastingLocal(g *GlobalState, i int, h node.Hash) node.Hash {
	x := g.ext
	heal := uint64(0)
	if x.cut.Kind != 0 && m.healEnabled(g) {
		heal = 1
	}
	return mix(tagLastingLocal, heal, uint64(i), xorHash(h, x.hash))
}

// downHash marks a down node's hash, so that it never equals an up node's.
func downHash(h node.Hash) node.Hash { return mix(tagDown, 0, 0, h) }

// lastingString renders the lasting faults of g for GlobalState.String:
// the partition in place and the clock offsets.
func (g *GlobalState) lastingString() string {
	x := g.ext
	if x == nil {
		return ""
	}
	var out []byte
	if x.cut.Kind != 0 {
		out = fmt.Appendf(out, "partition: %s", x.cut.cutString())
		if !x.healAt.IsZero() {
			out = fmt.Appendf(out, " (heals in %v)", x.healAt.Sub(g.now()))
		}
		out = append(out, '\n')
	}
	for i, o := range x.offsets {
		if o != 0 {
			sign := "+"
			if o < 0 {
				sign = ""
			}
			out = fmt.Appendf(out, "%v: clock %s%v\n", g.m.ids[i], sign, o)
		}
	}
	return string(out)
}

// Down reports whether node id is down (crashed and not restarted) in g.
func (g *GlobalState) Down(id node.ID) bool {
	i, ok := g.m.index(id)
	return ok && g.nodes[i].down
}

// Cut reports whether what from sends to to is lost to the partition in
// place in g.
func (g *GlobalState) Cut(from, to node.ID) bool {
	if g.ext == nil || len(g.ext.cuts) == 0 {
		return false
	}
	_, ok := slices.BinarySearchFunc(g.ext.cuts, connKey{from, to}, cmpConn)
	return ok
}

// ClockOffset returns how far node id's clock (its Env.Now) is off the
// virtual clock after the clock jumps along the path to g.
func (g *GlobalState) ClockOffset(id node.ID) time.Duration {
	i, ok := g.m.index(id)
	if !ok {
		return 0
	}
	return offsetOf(g.ext, i)
}

// Crashes, Partitions and ClockJumps return the lasting faults injected
// along the path to g.
func (g *GlobalState) Crashes() int { return int(g.ext.count(0)) }

// Partitions returns the partitions put in place along the path to g.
func (g *GlobalState) Partitions() int { return int(g.ext.count(1)) }

// ClockJumps returns the clock jumps along the path to g.
func (g *GlobalState) ClockJumps() int { return int(g.ext.count(2)) }

func (x *lastingState) count(k int) int32 {
	if x == nil {
		return 0
	}
	return [...]int32{x.crashes, x.partitions, x.jumps}[k]
}

// lastingString renders an action of a lasting fault: "n2 crash", "n2
// restart", "n1 partition isolate n1", "n1 partition one-way n1 -> n2",
// "n1 heal", "n3 clock-jump forward", "n3 clock-jump back".
func (a ActorAction) lastingString() (string, bool) {
	switch a.Kind {
	case ActCrash:
		return fmt.Sprintf("%v crash", a.Node), true
	case ActRestart:
		return fmt.Sprintf("%v restart", a.Node), true
	case ActPartition:
		return fmt.Sprintf("%v partition %s", a.Node, a.cutString()), true
	case ActHeal:
		return fmt.Sprintf("%v heal", a.Node), true
	case ActClockJump:
		if a.Back {
			return fmt.Sprintf("%v clock-jump back", a.Node), true
		}
		return fmt.Sprintf("%v clock-jump forward", a.Node), true
	}
	return "", false
}

// lastingKindNames name the lasting faults' kinds in reports.
var lastingKindNames = map[ActorActionKind]string{
	ActCrash: "crash", ActRestart: "restart", ActPartition: "partition", ActHeal: "heal", ActClockJump: "clock-jump",
}

// recordLasting fills r (the record of a) for a lasting fault, and
// reports whether a is one.
func recordLasting(a ActorAction, r *ActionRecord) bool {
	name, ok := lastingKindNames[a.Kind]
	if !ok {
		return false
	}
	r.Kind, r.Back = name, a.Back
	if a.Kind == ActPartition {
		r.Cut = a.Cut.String()
		r.Side = sideIDs(a.Side)
	}
	return true
}

// lastingAction decodes the record of a lasting fault into a, and
// reports whether r names one (an error for a malformed one).
func lastingAction(r ActionRecord, a *ActorAction) (bool, error) {
	for k, name := range lastingKindNames {
		if name != r.Kind {
			continue
		}
		a.Kind, a.Back = k, r.Back
		if k != ActPartition {
			return true, nil
		}
		cut, err := ParseCutKinds(r.Cut)
		if err != nil || bits.OnesCount8(uint8(cut)) != 1 {
			return true, fmt.Errorf("%w: partition of kind %q", ErrBadReport, r.Cut)
		}
		a.Cut = cut
		if cut == CutSplit {
			side, ok := SideOf(r.Side)
			if !ok {
				return true, fmt.Errorf("%w: split side %v outside n1..n%d", ErrBadReport, r.Side, splitMaxID)
			}
			a.Side = side
		}
		return true, nil
	}
	return false, nil
}

// downString renders down node id (n) for GlobalState.String: "n2: down"
// and, if it restarts, "(restarts)".
func downString(id node.ID, n *actorNode) string {
	if _, ok := n.st.TimerAt(restartTimer); ok {
		return fmt.Sprintf("%v: down (restarts)\n", id)
	}
	return fmt.Sprintf("%v: down\n", id)
}

// Faults returns the faults the model explores.
func (m *ActorModel) Faults() Faults { return m.opts.Faults }

// WithLasting returns f with the lasting-fault budgets (Crashes to
// ClockJump) of l instead of its own.
func (f Faults) WithLasting(l Faults) Faults {
	f.Crashes, f.Downtime = l.Crashes, l.Downtime
	f.Partitions, f.PartitionKinds, f.PartitionLength = l.Partitions, l.PartitionKinds, l.PartitionLength
	f.ClockJumps, f.ClockJump = l.ClockJumps, l.ClockJump
	return f
}

// Lasting reports whether f explores any lasting fault (crash-stops,
// partitions, clock jumps).
func (f Faults) Lasting() bool { return f.lasting() }
