package snapshot

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The gatherer side of the protocol: rounds of Requests, the members'
// answers, and the Snapshot they make.

// startRound starts a round of the current gather for cut cr.
func (m *Manager) startRound(cr uint64) {
	if cr > MaxCN {
		// The neighbourhood counts as seen, so GatherOnChange does not
		// fail again after every step until it changes.
		m.lastMembers = m.members()
		m.fail(FailureExhausted)
		return
	}
	g := m.g
	g.round++
	m.stats.Rounds++
	cr, ok := m.ownCut(cr)
	if !ok {
		return
	}
	m.seq++
	g.id, g.cr, g.maxNeg = m.seq, cr, 0
	g.all = m.members()
	m.lastMembers = g.all
	m.splitVouched(g)
	g.deadline = m.now.Add(m.cfg.GatherTimeout)
	m.ask(g)
	m.checkRound()
}

// ownCut sets the gather's own checkpoint for cut cr, checkpointing the
// node if its number is below cr, and returns the cut the round asks for:
// cr, or the cut after the node's number when the node's checkpoint of cr
// is gone. false: the gather failed.
func (m *Manager) ownCut(cr uint64) (uint64, bool) {
	if cr > m.cn && !m.takeOrFail(cr) {
		return 0, false
	}
	if m.g.own = m.find(cr); m.g.own != nil {
		return cr, true
	}
	// Our own checkpoint of that cut is gone: move the cut past our
	// number.
	if cr = m.nextCut(); cr > MaxCN {
		m.fail(FailureExhausted)
		return 0, false
	}
	if !m.takeOrFail(cr) {
		return 0, false
	}
	m.g.own = m.find(cr)
	return cr, true
}

// takeOrFail checkpoints the node for the gather's cut cr, giving the
// gather up when the Source fails.
func (m *Manager) takeOrFail(cr uint64) bool {
	if err := m.take(cr, CheckpointRequested); err != nil {
		m.fail(err.Error())
		return false
	}
	return true
}

// splitVouched sets the round's members from its neighbourhood g.all:
// members no witness vouches for are left out of the round, so that the
// others do not wait for channels from them (ReasonUnvouched).
func (m *Manager) splitVouched(g *gatherState) {
	g.members, g.unvouched = make([]node.ID, 0, len(g.all)), nil // sent in Requests: never reused
	for _, id := range g.all {
		if id == m.self || m.vouched(id) {
			g.members = append(g.members, id)
		} else {
			g.unvouched = append(g.unvouched, id)
		}
	}
}

// ask sends the round's Requests to its members and the Marker that
// closes the node's channel to itself.
func (m *Manager) ask(g *gatherState) {
	g.status = make(map[node.ID]*memberState, len(g.members))
	for _, id := range g.members {
		if id != m.self {
			g.status[id] = &memberState{}
			m.send(id, Request{Gather: g.id, CR: g.cr, Members: g.members})
		}
	}
	m.send(m.self, Marker{Gather: g.id})
}

// nextRound starts another round if the gather has rounds left, and gives
// it up otherwise.
func (m *Manager) nextRound(cr uint64, why string) {
	if m.g.round >= m.cfg.MaxRounds {
		m.fail(why + " in the last round")
		return
	}
	m.startRound(cr)
}

func (m *Manager) fail(why string) {
	m.stats.GathersFailed++
	m.fx.Failures = append(m.fx.Failures, Failure{Gather: m.g.id, Rounds: m.g.round, Reason: why})
	m.g = nil
}

func (m *Manager) pendingMember(from node.ID, gather uint64) *memberState {
	g := m.g
	if g == nil || gather != g.id {
		return nil
	}
	st := g.status[from]
	if st == nil || st.state != memberPending {
		return nil
	}
	return st
}

// onResponse takes member from's answer into the round: its checkpoint
// and recorded channels if readable, a resync when it is against a base
// this node lacks, an exclusion when malformed.
func (m *Manager) onResponse(from node.ID, r Response) {
	st := m.pendingMember(from, r.Gather)
	if st == nil {
		return // stale: an earlier round's answer
	}
	if !m.fitsRound(&r) {
		m.reject(from, r.Gather, st, "malformed response")
		return
	}
	b := m.baseFor(from, r.Base)
	if b == nil && r.againstBase() {
		m.resync(from, r.Gather, st)
		return
	}
	raw, msgs, why := m.readResponse(from, &r, b)
	if why != "" {
		m.reject(from, r.Gather, st, why)
		return
	}
	m.accept(from, st, &r, raw, msgs)
}

// fitsRound reports whether r is well formed and answers the current
// round: its cut, one channel record per member.
func (m *Manager) fitsRound(r *Response) bool {
	return r.validate(m.cfg.MaxCheckpointSize) == nil && r.CR == m.g.cr && len(r.Channels) == len(m.g.members)
}

// againstBase reports whether r's checkpoint is encoded against a base
// (a delta, or unchanged).
func (r *Response) againstBase() bool {
	return r.Encoding == EncodingSame || r.Encoding == EncodingDelta
}

// baseFor returns the checkpoint with hash h that member from acknowledged
// (the latest such), or nil.
func (m *Manager) baseFor(from node.ID, h uint64) []byte {
	var b []byte
	for _, x := range m.bases[from] {
		if x.hash == h {
			b = x.raw
		}
	}
	return b
}

// reject excludes member from, whose answer st is, for a malformed answer.
func (m *Manager) reject(from node.ID, gather uint64, st *memberState, why string) {
	m.stats.BadMessages++
	st.state, st.reason, st.bad = memberExcluded, why, true
	// Resynchronise: an Ack of nothing withdraws the base the member
	// would answer against (this node may have restarted and lost it),
	// so the next answer is full.
	delete(m.bases, from)
	m.send(from, Ack{Gather: gather})
	m.checkRound()
}

// readResponse decodes r's checkpoint (against base b) and its recorded
// messages, or says why they are unreadable.
func (m *Manager) readResponse(from node.ID, r *Response, b []byte) ([]byte, [][]node.Envelope, string) {
	raw, why := m.readCheckpoint(r, b)
	if why != "" {
		return nil, nil, why
	}
	msgs, why := m.readChannels(from, r)
	return raw, msgs, why
}

// readCheckpoint decodes r's checkpoint against base b and checks it
// (vetState), or says why it cannot be used.
func (m *Manager) readCheckpoint(r *Response, b []byte) ([]byte, string) {
	c, err := m.compressor()
	if err != nil {
		return nil, "no decoder: " + err.Error()
	}
	raw, err := c.decode(r, b)
	if err != nil {
		return nil, "undecodable checkpoint"
	}
	return raw, m.vetState(r, raw)
}

// vetState checks a decoded checkpoint with the Source's
// CheckpointChecker, unless it is the acknowledged one unchanged (checked
// when it came): "" if it passes.
func (m *Manager) vetState(r *Response, raw []byte) string {
	if m.check == nil || r.Encoding == EncodingSame {
		return ""
	}
	if err := m.check(raw); err != nil {
		return "checkpoint of no state of the service: " + node.Clip(err.Error(), node.MaxShownString)
	}
	return ""
}

// readChannels decodes r's recorded messages into envelopes to member
// from, one slice per channel record, checking the records follow the
// round's members.
func (m *Manager) readChannels(from node.ID, r *Response) ([][]node.Envelope, string) {
	msgs := make([][]node.Envelope, len(r.Channels))
	for i, ch := range r.Channels {
		if ch.From != m.g.members[i] {
			return nil, "channel records do not match the members"
		}
		envs, ok := m.decodeRecorded(ch, from)
		if !ok {
			return nil, "undecodable recorded message"
		}
		msgs[i] = envs
	}
	return msgs, ""
}

// decodeRecorded decodes the messages of channel record ch, in flight to
// member to; false if one does not decode.
func (m *Manager) decodeRecorded(ch ChannelRecord, to node.ID) ([]node.Envelope, bool) {
	var envs []node.Envelope
	for _, rec := range ch.Msgs {
		msg, err := m.cfg.Registry.DecodeMessage(rec.Type, rec.Body)
		if err != nil {
			return nil, false
		}
		envs = append(envs, node.Envelope{From: ch.From, To: to, CN: rec.CN, Msg: msg})
	}
	return envs, true
}

// accept takes member from's readable answer r into the round, keeps its
// checkpoint as a delta base and acknowledges it.
func (m *Manager) accept(from node.ID, st *memberState, r *Response, raw []byte, msgs [][]node.Envelope) {
	st.state, st.cn, st.raw, st.channels, st.msgs, st.peers = memberOK, r.CN, raw, r.Channels, msgs, r.Peers
	m.bases[from] = keepLast(m.bases[from], base{hash: r.Hash, raw: raw}, 2)
	m.send(from, Ack{Gather: r.Gather, Hash: r.Hash})
	m.checkRound()
}

// keepLast appends b to bs and keeps the last n bases.
func keepLast(bs []base, b base, n int) []base {
	bs = append(bs, b)
	if len(bs) > n {
		bs = slices.Delete(bs, 0, len(bs)-n)
	}
	return bs
}

// resync handles an answer against a base this node does not hold (it
// restarted since it acknowledged it, or dropped it): no bad answer, but
// one it cannot read. The base is withdrawn (an Ack of nothing, which the
// member reads before the next Request on the same FIFO channel) and the
// member is asked again in the gather's next round, which it answers in
// full. Before, the member was left out of the gather: a restarted node's
// first gather held none of the peers that had answered it before, so its
// immediate check judged its first events blind to them (the zoo lease's
// grantor granted a lease its holder, excluded so, still held). A member
// that answers against unknown bases every time costs at most
// Config.MaxRounds rounds, as a pruned checkpoint does.
func (m *Manager) resync(from node.ID, gather uint64, st *memberState) {
	m.stats.Resyncs++
	delete(m.bases, from)
	m.send(from, Ack{Gather: gather})
	st.state, st.reason = memberRetry, "answered against a base this node no longer holds"
	m.checkRound()
}

func (m *Manager) onNegative(from node.ID, n Negative) {
	st := m.pendingMember(from, n.Gather)
	if st == nil {
		return
	}
	switch n.Reason {
	case ReasonPruned:
		m.retryAt(from, n, st)
	case ReasonWindow:
		m.refusedCut(n, st)
	default:
		st.state, st.reason = memberExcluded, refusalReason(n.Reason)
	}
	m.checkRound()
}

// retryAt handles member from's answer that its checkpoint of the cut is
// pruned: the member is retried at its number n.CN in the next round, if
// that number is well formed and within the window.
func (m *Manager) retryAt(from node.ID, n Negative, st *memberState) {
	if n.CN > MaxCN || n.CN < m.g.cr {
		m.stats.BadMessages++
		st.state, st.reason, st.bad = memberExcluded, "malformed negative answer", true
		return
	}
	if n.CN > m.limit(from) {
		// Retrying there would jump this node's number beyond the
		// window on one peer's word.
		m.stats.CNRejected++
		st.state, st.reason, st.bad = memberExcluded, "checkpoint number beyond the window", true
		return
	}
	st.state, st.reason = memberRetry, "checkpoint pruned"
	m.g.maxNeg = max(m.g.maxNeg, n.CN)
	m.spend(from, n.CN) // the retry adopts it
}

// refusedCut handles a member's answer that the cut lies beyond its
// window: it is excluded, and counts as a refuser (rebaseTarget) when its
// number is more than a window below the cut.
func (m *Manager) refusedCut(n Negative, st *memberState) {
	st.state, st.reason = memberExcluded, "the cut is beyond its window"
	if n.CN < m.g.cr && m.g.cr-n.CN > uint64(m.cfg.CNWindow) {
		st.cn, st.refused = n.CN, true
	}
}

// refusalReason is the exclusion reason of a member that refused for
// reason (other than a pruned checkpoint or the window).
func refusalReason(reason uint8) string {
	if reason == ReasonBandwidth {
		return "bandwidth cap"
	}
	return "refused"
}

// checkRound finishes the current round once every member has answered
// (or is dead) and our own channels have closed (or the round timed out).
func (m *Manager) checkRound() {
	if m.roundDone() {
		m.endRound()
	}
}

// roundDone reports whether a round is in progress that every member has
// answered (or is dead) and whose own channels have closed (or that timed
// out).
func (m *Manager) roundDone() bool {
	g := m.g
	if g == nil || g.any(memberPending) {
		return false
	}
	return !m.now.Before(g.deadline) || m.closed(m.self, g.cr)
}

// any reports whether a member of the round is in state.
func (g *gatherState) any(state uint8) bool {
	for _, st := range g.status {
		if st.state == state {
			return true
		}
	}
	return false
}

// endRound ends a finished round: another round for the members to
// retry, a rebase when every member refused the cut, a failure when
// nobody answered, else the snapshot.
func (m *Manager) endRound() {
	g := m.g
	if g.any(memberRetry) && g.round < m.cfg.MaxRounds {
		// g.cr+1 is at most MaxCN+1, which startRound refuses.
		m.startRound(max(g.maxNeg, g.cr+1))
		return
	}
	if to, ok := m.rebaseTarget(); ok {
		m.rebase(to)
		m.nextRound(m.nextCut(), "rebased")
		return
	}
	if why, ok := m.nobodyAnswered(); ok {
		m.fail(why)
		return
	}
	m.finish()
}

// nobodyAnswered reports, with a FailureNoMember reason, whether the round
// had members besides the gatherer and every one of them is dead or
// answered malformed: a snapshot of the gatherer alone is no success.
// Members that chose to leave themselves out (bandwidth, size, pruned
// checkpoints) answered, so their absence is a snapshot's, not a failure.
func (m *Manager) nobodyAnswered() (string, bool) {
	dead, bad, silent := m.silentMembers()
	if !silent || len(dead)+len(bad) == 0 {
		return "", false
	}
	return failureNoMember(dead, bad), true
}

// silentMembers returns the round's dead members and those excluded for
// a malformed answer, and whether those are all the members besides the
// gatherer.
func (m *Manager) silentMembers() (dead, bad []node.ID, all bool) {
	g := m.g
	for _, id := range g.members {
		st := g.status[id]
		switch {
		case id == m.self:
		case st.state == memberDead:
			dead = append(dead, id)
		case st.state == memberExcluded && st.bad:
			bad = append(bad, id)
		default:
			return nil, nil, false
		}
	}
	return dead, bad, true
}

// failureNoMember is the FailureNoMember reason naming the dead and the
// malformed members.
func failureNoMember(dead, bad []node.ID) string {
	why := FailureNoMember
	if len(dead) > 0 {
		why += fmt.Sprintf(": dead %v", dead)
	}
	if len(bad) > 0 {
		why += fmt.Sprintf(": malformed %v", bad)
	}
	return why
}

// finish turns the current round's answers into a Snapshot.
func (m *Manager) finish() {
	g := m.g
	m.g = nil
	s := &Snapshot{Gatherer: m.self, Gather: g.id, CN: g.cr, Started: g.started, At: m.now, Rounds: g.round}
	included := m.addNodes(g, s)
	addUnvouched(g, s)
	m.addChannels(g, s, included)
	m.stats.Gathers++
	m.fx.Snapshots = append(m.fx.Snapshots, s)
	m.secondHop(s)
}

// addNodes puts every member of round g into s (included, dead or
// excluded) and returns the included ones, ascending.
func (m *Manager) addNodes(g *gatherState, s *Snapshot) []node.ID {
	var included []node.ID
	for _, id := range g.members {
		if m.addNode(g, s, id) {
			included = append(included, id)
		}
	}
	return included
}

// addNode puts member id of round g into s: its checkpoint (the node's own
// for the gatherer) if it answered, else among the dead or the excluded.
// It reports whether id is included.
func (m *Manager) addNode(g *gatherState, s *Snapshot, id node.ID) bool {
	if id == m.self {
		s.Nodes = append(s.Nodes, NodeCheckpoint{Node: id, CN: g.own.cn, State: g.own.state, Peers: m.recentPeers()})
		return true
	}
	st := g.status[id]
	switch st.state {
	case memberOK:
		s.Nodes = append(s.Nodes, NodeCheckpoint{Node: id, CN: st.cn, State: st.raw, Peers: st.peers})
		return true
	case memberDead:
		s.Dead = append(s.Dead, id)
	default:
		s.Excluded = append(s.Excluded, Exclusion{Node: id, Reason: st.reason})
	}
	return false
}

// addUnvouched adds the neighbours round g left out as unvouched to s's
// exclusions, keeping them ascending.
func addUnvouched(g *gatherState, s *Snapshot) {
	for _, id := range g.unvouched {
		s.Excluded = append(s.Excluded, Exclusion{Node: id, Reason: ReasonUnvouched})
	}
	if len(g.unvouched) > 0 {
		slices.SortFunc(s.Excluded, func(a, b Exclusion) int { return cmp.Compare(a.Node, b.Node) })
	}
}

// addChannels adds to s the channels between the included members: as the
// gatherer recorded those into itself, as each member recorded the others.
func (m *Manager) addChannels(g *gatherState, s *Snapshot, included []node.ID) {
	ownRecs, ownMsgs := m.record(g.own, g.cr, g.members)
	for _, to := range included {
		for _, from := range included {
			i, _ := slices.BinarySearch(g.members, from)
			if to == m.self {
				s.Channels = append(s.Channels, channelOf(from, to, ownRecs[i].Flags, ownEnvelopes(from, to, ownRecs[i], ownMsgs[i])))
			} else {
				st := g.status[to]
				s.Channels = append(s.Channels, channelOf(from, to, st.channels[i].Flags, st.msgs[i]))
			}
		}
	}
}

// ownEnvelopes returns the messages the gatherer recorded on the channel
// from → to (itself), with their numbers from rec.
func ownEnvelopes(from, to node.ID, rec ChannelRecord, msgs []node.Message) []node.Envelope {
	var envs []node.Envelope
	for k, msg := range msgs {
		envs = append(envs, node.Envelope{From: from, To: to, CN: rec.Msgs[k].CN, Msg: msg})
	}
	return envs
}

// channelOf is the snapshot's channel from → to, recorded with flags and
// messages msgs.
func channelOf(from, to node.ID, flags uint8, msgs []node.Envelope) Channel {
	return Channel{From: from, To: to, Messages: msgs, Complete: flags&FlagComplete != 0, Lossy: flags&FlagLossy != 0}
}
