package snapshot

import (
	"cmp"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// WitnessHost is a Source (a layer.Host) that vouches for peers' checkpoint
// numbers beyond the window (see Config.CNWindow). Without TLS a hello
// proves no ID, so two forged IDs that each send one number would
// otherwise catch every node up to it. live.Runtime's layer host is one:
// it vouches for an authenticated peer by its ID and for a member that
// proved itself on the service transport by its service address. It is
// called in the node's hooks, on its goroutine.
type WitnessHost interface {
	// CatchUpWitness returns the key of the evidence for peer — two
	// claims under one key count once — and false when the peer has
	// none a forger could not make.
	CatchUpWitness(peer node.ID) (key string, ok bool)
}

// PeerDirectory is a Source that knows which peers it can reach: the
// live runtime's layer host is one (a peer its directory holds an address
// for). A Request from a gatherer no witness vouches for (WitnessHost) is
// a stranger's word about who the members are: the node sends Markers
// only to the members it knows, since a Request naming a thousand IDs
// nobody runs would otherwise make it dial each of them (the audit's 20
// Requests: 20,025 goroutines and 267 MB). A channel to a member that
// gets no Marker closes at its RecordTimeout, incomplete. Without it every
// peer is known (the emulator, where every node exists). It is called in
// the node's hooks, on its goroutine.
type PeerDirectory interface {
	KnowsPeer(peer node.ID) bool
}

// CheckpointChecker is a Source that can check a peer's checkpoint bytes:
// node.Core is one (CheckCheckpoint decodes them as its service's), so
// both shells' layer hosts are. A gatherer checks every checkpoint it
// receives, once per distinct one (a checkpoint equal to a member's last
// acknowledged one is not checked again), and leaves a member whose bytes
// do not decode out of the snapshot as a malformed answer, with the
// reason: a member answering with garbage under a correct hash was taken
// in, and every later round failed ("bad checkpoint: missing header") —
// the gatherer's steering was off while the member stayed. Without it
// checkpoints are taken as they come.
type CheckpointChecker interface {
	CheckCheckpoint(b []byte) error
}

// ReasonUnvouched is the Exclusion reason of a member no witness vouches
// for (WitnessHost): without TLS, an ID only a hello claims. A forged ID
// that a service took for a neighbour (a RandTree node that took a forged
// Join for a child) would otherwise answer gathers with whatever state it
// likes and steer the node — the audit's forged child made its parent
// predict 5 violations in 12 s and hold back its own repair timer. What a
// member that does have a witness (proved, or authenticated by TLS) can
// still make a node do by lying is bounded by the steering rules
// (docs/ARCHITECTURE.md, "What a lying member can do").
const ReasonUnvouched = "no witness vouches for its ID"

// vouched reports whether a witness vouches for peer.
func (m *Manager) vouched(peer node.ID) bool {
	_, ok := m.witness(peer)
	return ok
}

// ownWitness vouches for every peer by its ID: where IDs cannot be forged
// (the emulator, the explorer, tests).
func ownWitness(peer node.ID) (string, bool) { return peer.String(), true }

// Failure reasons of the rules on numbers and members: Failure.Reason is
// FailureExhausted, or starts with FailureNoMember (followed by the dead
// and malformed members); other reasons are free text.
const (
	// FailureExhausted: the node's number reached MaxCN, so no cut above
	// it can be asked for.
	FailureExhausted = "checkpoint numbers exhausted"
	// FailureNoMember: the gatherer had neighbours but none of them is in
	// the snapshot, every one dead or its answer malformed. A snapshot of
	// the gatherer alone would predict nothing about its neighbourhood,
	// and is what a gatherer whose traffic its peers drop (say, because
	// its number was poisoned) would otherwise report as a success.
	FailureNoMember = "no member answered"
)

// window returns the largest number this node adopts from one peer: its own
// number plus Config.CNWindow, at most MaxCN.
func (m *Manager) window() uint64 {
	w := uint64(m.cfg.CNWindow)
	if m.cn >= MaxCN || w >= MaxCN-m.cn {
		return MaxCN
	}
	return m.cn + w
}

// admit vets the number cn carried by a message from peer and returns the
// number the node treats the message as carrying: cn itself when it lies
// within the window (or once two witnesses agree on a jump beyond it:
// claims are counted once per witness key, and a peer without a witness
// makes none), else the
// node's own number, which neither forces a checkpoint nor makes the
// message a late one. For an honest peer further ahead that is sound: its
// message was sent after its checkpoints for every cut up to the node's
// number, so it closes the channel for those cuts and crossed none of
// them. A catch-up adopts the second largest claim, so cn itself (the
// largest) may still lie beyond the new window and is then refused.
func (m *Manager) admit(peer node.ID, cn uint64) (uint64, error) {
	if cn <= m.cn {
		return cn, nil
	}
	if cn <= m.window() {
		return m.withinWindow(peer, cn), nil
	}
	if cn > MaxCN {
		m.stats.BadMessages++
		m.stats.CNRejected++
		return m.cn, nil
	}
	return m.beyondWindow(peer, cn)
}

// withinWindow admits a number cn within the window from peer, at most
// what peer's rate limit allows, and charges it.
func (m *Manager) withinWindow(peer node.ID, cn uint64) uint64 {
	if lim := m.limit(peer); cn > lim {
		// Within the window but past the rate limit: the message is
		// handled as carrying the largest number the limit allows,
		// which is sound for the same reason as the node's own
		// number is below (the sender was past every cut up to it).
		m.stats.CNLimited++
		cn = lim
	}
	m.spend(peer, cn)
	return cn
}

// beyondWindow admits a number cn beyond the window from peer: it is a
// claim, and the node catches up once two witnesses agree on a jump
// (catchUp); cn is adopted if the window then covers it, else refused.
func (m *Manager) beyondWindow(peer node.ID, cn uint64) (uint64, error) {
	if peer != m.self {
		m.claim(peer, cn)
	}
	if v, ok := m.corroborated(); ok {
		if err := m.catchUp(v); err != nil {
			return m.cn, err
		}
		if cn <= m.window() {
			return cn, nil
		}
	}
	m.stats.CNRejected++
	return m.cn, nil
}

// catchUp jumps the node's number to v, which two witnesses vouch for.
func (m *Manager) catchUp(v uint64) error {
	if err := m.take(v, CheckpointForced); err != nil {
		return err
	}
	// Messages handled before the jump carried numbers up to v that
	// were not adopted: this checkpoint is not the node's state at
	// any cut up to v, so requests for those cuts are refused, as
	// after a reset.
	m.prunedCN = max(m.prunedCN, v)
	m.stats.CNCaughtUp++
	m.dropClaims()
	return nil
}

// The rate limit. A number within the window is adopted, but one peer
// could send one window after another, each within the window of the
// last: the audit's forged ID moved a node to 2^37 in 1.6 s (194,454
// forced checkpoints), past every neighbour's window, and the node's
// gathers failed until it restarted. So what a node adopts from a peer is
// also bounded in time: at most Config.CNWindow numbers per Interval (a
// bucket as deep as the window, refilled at that rate) per witness — per
// peer where IDs cannot be forged, per proved address or authenticated ID
// live — and one bucket for all the peers without a witness. Honest
// numbers grow by a few thousand a second at most (see DefaultCNWindow),
// far below it; a node's own increments and gathers, and a catch-up two
// witnesses agree on, are not charged. A node one peer pushed a whole
// bucket ahead may be beyond the window of a neighbour that did not hear
// from it meanwhile: its next gather finds that member refusing, and
// rebases (below). Past the limit a number is cut to
// what the bucket allows (Stats.CNLimited), which is sound for the reason
// a number beyond the window may be taken as the node's own (admit).

// cnBucket is one witness's rate limit: left numbers as of at.
type cnBucket struct {
	left float64
	at   time.Time
}

// bucketKey is the rate limit's key for peer: its witness's, or "" for
// every peer without one.
func (m *Manager) bucketKey(peer node.ID) string {
	if key, ok := m.witness(peer); ok {
		return "w:" + key
	}
	return ""
}

// limit returns the largest number the node may adopt from peer now: its
// window, or less when peer's bucket holds less.
func (m *Manager) limit(peer node.ID) uint64 {
	w := m.window()
	if left := m.allowance(m.bucketKey(peer)); left < w-m.cn {
		return m.cn + left
	}
	return w
}

// allowance refills key's bucket to now and returns what it holds. The
// buckets are at most MaxMembers: a new key evicts the one refilled
// longest ago (ties by key: map order must not leak out), which is full
// by then or an idle stranger's.
func (m *Manager) allowance(key string) uint64 {
	w := float64(m.cfg.CNWindow)
	b, ok := m.buckets[key]
	if !ok {
		if len(m.buckets) >= MaxMembers {
			delete(m.buckets, m.stalestBucket())
		}
		b = &cnBucket{left: w, at: m.now}
		m.buckets[key] = b
	}
	if dt := m.now.Sub(b.at); dt > 0 {
		b.left = min(w, b.left+w*dt.Seconds()/m.cfg.Interval.Seconds())
		b.at = m.now
	}
	return uint64(b.left)
}

// stalestBucket returns the key of the bucket refilled longest ago, ties
// by key: map order must not leak out.
func (m *Manager) stalestBucket() string {
	old, found := "", false
	for k, x := range m.buckets {
		if !found || cmp.Or(m.buckets[old].at.Compare(x.at), cmp.Compare(old, k)) > 0 {
			old, found = k, true
		}
	}
	return old
}

// spend charges peer's bucket for adopting cn (at most limit(peer)).
func (m *Manager) spend(peer node.ID, cn uint64) {
	if cn <= m.cn {
		return
	}
	key := m.bucketKey(peer)
	m.allowance(key)
	b := m.buckets[key]
	b.left = max(0, b.left-float64(cn-m.cn))
}

// claim remembers peer's number beyond the window, under its witness's
// key; a peer without a witness is counted (Stats.CNUnvouched) and
// claims nothing. The set is bounded by MaxMembers: when full, the
// largest claim goes, since one peer's hostile numbers are the largest and
// honest peers' numbers the ones to keep.
func (m *Manager) claim(peer node.ID, cn uint64) {
	key, ok := m.witness(peer)
	if !ok {
		m.stats.CNUnvouched++
		return
	}
	if _, ok := m.claims[key]; !ok && len(m.claims) >= MaxMembers {
		delete(m.claims, m.largestClaim())
	}
	m.claims[key] = max(m.claims[key], cn)
}

// largestClaim returns the key of the largest claim, ties by key: map
// order must not leak out.
func (m *Manager) largestClaim() string {
	top, found := "", false
	for k, c := range m.claims {
		if !found || cmp.Or(cmp.Compare(c, m.claims[top]), cmp.Compare(top, k)) > 0 {
			top, found = k, true
		}
	}
	return top
}

// corroborated returns the second largest claim beyond the window, if two
// witnesses make one: a jump at least two distinct witnesses vouch for,
// and the largest number the node can adopt without trusting one alone.
func (m *Manager) corroborated() (uint64, bool) {
	lim := m.window()
	var first, second uint64
	for _, c := range m.claims {
		switch {
		case c <= lim:
		case c > first:
			first, second = c, first
		case c > second:
			second = c
		}
	}
	return second, second > lim
}

// dropClaims forgets the claims the window now covers.
func (m *Manager) dropClaims() {
	lim := m.window()
	for id, c := range m.claims {
		if c <= lim {
			delete(m.claims, id)
		}
	}
}

// nextCut returns the cut after the node's number. At MaxCN that is
// MaxCN+1 (no wrap: MaxCN is far below the uint64 range), which startRound
// refuses with FailureExhausted rather than step past the bound peers
// check numbers against.
func (m *Manager) nextCut() uint64 { return m.cn + 1 }

// Recovery of a node its members refuse. Should a node's number get more
// than a window ahead of every member of its neighbourhood (it was pushed
// while they did not hear from it, or before the rate limit), each member
// answers its Requests with ReasonWindow and ignores its numbers, so none
// of its gathers could succeed again: the audit's node had no snapshot and
// no steering round until it restarted. A node whose round every member
// refused so rebases instead: it moves its number back to just above
// theirs, as a restarted process starts over, keeping its service state.
// Its stored checkpoints and log belong to the old numbering and go; cuts
// up to the new number are refused (pruned), as after a catch-up; its
// later messages carry lower numbers than its earlier ones, which their
// receivers take as a numbering that started over (Manager.wentBack: the
// channel starts over and is lossy). A rebase never goes below the last
// number a peer that has a witness sent (numbers received in the old
// numbering must not lie above a cut of the new one, or its checkpoint
// would have seen a message sent after the peer's): if one of them is up
// there too, the refusing members have two witnesses beyond their window
// and catch up instead. Peers without a witness are forgotten (their
// channels lossy): they are in no snapshot. The refusals count only from
// members a witness vouches for, so forged IDs cannot make a node rebase.

// rebaseTarget returns the number to rebase to when every member of the
// round but the node that answered at all refused its cut as beyond their
// windows, each with a witness and more than a window below the cut: one
// above the largest refuser's number, and at least the last number of
// every peer with a witness, if that is below the node's number.
func (m *Manager) rebaseTarget() (uint64, bool) {
	to, ok := m.refusersFloor()
	if !ok {
		return 0, false
	}
	if to = max(to, m.witnessedFloor()); to >= m.cn {
		return 0, false
	}
	return to, true
}

// refusersFloor returns one above the largest number of the round's
// refusers, and whether every member that answered at all refused the cut
// (rebaseTarget), each with a witness, and there was one.
func (m *Manager) refusersFloor() (uint64, bool) {
	g := m.g
	var to uint64
	refusers := 0
	for _, id := range g.members {
		st := g.status[id]
		if id == m.self || st.silent() {
			continue // it said nothing (a forged member is one)
		}
		if !st.refused || !m.vouched(id) {
			return 0, false
		}
		to = max(to, st.cn+1)
		refusers++
	}
	return to, refusers > 0
}

// silent reports whether the member said nothing in the round: dead, or
// left out as unvouched.
func (st *memberState) silent() bool {
	return st.state == memberDead || st.reason == ReasonUnvouched
}

// witnessedFloor returns the largest number a peer with a witness sent
// the node: a rebase never goes below it.
func (m *Manager) witnessedFloor() uint64 {
	var to uint64
	for id, cn := range m.lastCN {
		if m.vouched(id) && id != m.self {
			to = max(to, cn)
		}
	}
	return to
}

// rebase moves the node's number back to to (see rebaseTarget).
func (m *Manager) rebase(to uint64) {
	m.stats.Rebased++
	m.store, m.storeCost = nil, 0
	m.log, m.logCost = nil, 0
	m.answers = nil
	for id, cn := range m.lastCN {
		if cn > to {
			delete(m.lastCN, id)
			m.dirty[id] = true
		}
	}
	clear(m.sentCN)
	clear(m.claims)
	m.cn, m.prunedCN = to, to
}
