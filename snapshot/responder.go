package snapshot

import (
	"bytes"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The responder side of the protocol: a node answering a gatherer's
// Request records the channels into it and sends its checkpoint.

// onRequest answers a Request from from: a Negative when the cut is beyond
// the window, pruned or the node busy; else Markers to the other members
// and an answer that waits for their channels (pollAnswers).
func (m *Manager) onRequest(from node.ID, r Request) error {
	m.stats.Requests++
	if !m.wellFormed(from, &r) {
		m.stats.BadMessages++
		return nil
	}
	if r.CR > m.limit(from) {
		// A cut this node would have to jump to: the gatherer's number
		// was not adopted either (see admit). The answer says so, with
		// this node's number: a gatherer every member answers so is
		// ahead of them all and rebases.
		m.stats.CNRejected++
		m.negative(from, r, ReasonWindow)
		return nil
	}
	if err := m.reach(from, r.CR); err != nil {
		return err
	}
	cp := m.find(r.CR)
	if reason := m.refusal(cp); reason != 0 {
		m.negative(from, r, reason)
		return nil
	}
	m.sendMarkers(from, &r)
	m.answers = append(m.answers, &answer{gather: r.Gather, to: from, cr: r.CR, cp: cp,
		members: slices.Clone(r.Members), deadline: m.now.Add(m.cfg.RecordTimeout)})
	return nil
}

// wellFormed reports whether a Request from from is within bounds and
// names both from and this node among its members.
func (m *Manager) wellFormed(from node.ID, r *Request) bool {
	return validateRequest(r) == nil && slices.Contains(r.Members, from) && slices.Contains(r.Members, m.self)
}

// reach checkpoints the node for a cut cr above its number that from asked
// for, charging from's rate limit.
func (m *Manager) reach(from node.ID, cr uint64) error {
	if cr <= m.cn {
		return nil
	}
	m.spend(from, cr)
	return m.take(cr, CheckpointRequested)
}

// refusal is the reason to refuse a request answered from checkpoint cp
// (nil: pruned), or 0 to answer it.
func (m *Manager) refusal(cp *checkpoint) uint8 {
	if cp == nil {
		return ReasonPruned
	}
	if len(m.answers) >= m.cfg.MaxPendingAnswers {
		return ReasonBusy
	}
	return 0
}

// sendMarkers sends a Marker to the members of r other than from whose
// channel from this node the Marker must close for r's cut: a message
// already sent on the channel with CN ≥ cr closes it (FIFO); otherwise a
// Marker does.
func (m *Manager) sendMarkers(from node.ID, r *Request) {
	// A stranger's member list is its word alone: Markers go only to
	// the members this node knows (PeerDirectory).
	trusted := m.vouched(from)
	for _, id := range r.Members {
		if id != from && m.sentCN[id] < r.CR && m.mayMark(id, trusted) {
			m.send(id, Marker{Gather: r.Gather})
		}
	}
}

// mayMark reports whether a Marker may go to member id of a request whose
// gatherer is trusted (vouched for) or not.
func (m *Manager) mayMark(id node.ID, trusted bool) bool {
	return trusted || id == m.self || m.knows(id)
}

func (m *Manager) negative(to node.ID, r Request, reason uint8) {
	m.stats.Negatives++
	if reason == ReasonBandwidth {
		m.stats.NegativeBandwidth++
	}
	m.send(to, Negative{Gather: r.Gather, CR: r.CR, CN: m.cn, Reason: reason})
}

// closed reports whether the channel from s has closed for cut cr: a
// message with CN ≥ cr arrived on it. Numbers on a channel never decrease
// and the node's number is ≥ every number it received, so that message
// arrived after the node's checkpoint for cr.
func (m *Manager) closed(s node.ID, cr uint64) bool { return m.lastCN[s] >= cr }

// pollAnswers sends every answer whose channels have all closed or whose
// deadline has passed.
func (m *Manager) pollAnswers() {
	kept := m.answers[:0]
	for _, a := range m.answers {
		if m.ready(a) {
			m.respond(a)
		} else {
			kept = append(kept, a)
		}
	}
	clear(m.answers[len(kept):])
	m.answers = kept
}

// ready reports whether answer a is to be sent: its deadline has passed
// or the channels from all its members have closed.
func (m *Manager) ready(a *answer) bool {
	if !m.now.Before(a.deadline) {
		return true
	}
	for _, s := range a.members {
		if !m.closed(s, a.cr) {
			return false
		}
	}
	return true
}

// record returns the recorded state of the channels from members into this
// node for cut cr with checkpoint cp: for each member s, the late messages
// from s logged after cp with CN < cr, whether the channel closed, and
// whether a transport error about s was logged after cp.
func (m *Manager) record(cp *checkpoint, cr uint64, members []node.ID) ([]ChannelRecord, [][]node.Message) {
	recs := m.channelFlags(cp, cr, members)
	msgs := make([][]node.Message, len(members))
	for j := range m.log {
		e := &m.log[j]
		if e.pos <= cp.pos {
			continue
		}
		if i, ok := slices.BinarySearch(members, e.from); ok {
			e.recordInto(&recs[i], &msgs[i], cr)
		}
	}
	return recs, msgs
}

// channelFlags returns one record per member s with the flags known from
// checkpoint cp alone: complete if the channel from s closed for cut cr,
// lossy if s was dirty at cp.
func (m *Manager) channelFlags(cp *checkpoint, cr uint64, members []node.ID) []ChannelRecord {
	recs := make([]ChannelRecord, len(members))
	for i, s := range members {
		recs[i].From = s
		if m.closed(s, cr) {
			recs[i].Flags |= FlagComplete
		}
		if cp.lossy(s) {
			recs[i].Flags |= FlagLossy
		}
	}
	return recs
}

// recordInto adds log entry e, logged after the checkpoint, to its
// sender's channel record rec (and msgs, the messages themselves): a
// transport error makes it lossy, a late message below cut cr is recorded
// unless the record is full, which leaves it incomplete.
func (e *logEntry) recordInto(rec *ChannelRecord, msgs *[]node.Message, cr uint64) {
	switch {
	case e.err:
		rec.Flags |= FlagLossy
	case e.rec.CN < cr:
		if len(rec.Msgs) == MaxRecorded {
			rec.Flags &^= FlagComplete
			return
		}
		rec.Msgs = append(rec.Msgs, e.rec)
		*msgs = append(*msgs, e.msg)
	}
}

// respond sends the Response for a (or a Negative if the bandwidth cap
// forbids it).
func (m *Manager) respond(a *answer) {
	raw := a.cp.state
	if len(raw) > m.cfg.MaxCheckpointSize {
		m.negative(a.to, Request{Gather: a.gather, CR: a.cr}, ReasonTooLarge)
		return
	}
	recs, _ := m.record(a.cp, a.cr, a.members)
	r := Response{Gather: a.gather, CR: a.cr, CN: a.cp.cn, Hash: a.cp.hash, RawLen: uint32(len(raw)), Channels: recs, Peers: m.recentPeers()}
	m.encodeState(&r, a.to, raw)
	size := r.wireSize()
	if !m.allow(size) {
		m.negative(a.to, Request{Gather: a.gather, CR: a.cr}, ReasonBandwidth)
		return
	}
	m.countResponse(&r, size, len(raw))
	m.sent[a.to] = keepLast(m.sent[a.to], base{hash: a.cp.hash, raw: raw}, 4)
	m.send(a.to, r)
}

// encodeState sets r's Encoding, Base and State for checkpoint raw to
// peer to: unchanged against the checkpoint to acknowledged, raw when
// compression is off, else compressed (compressState).
func (m *Manager) encodeState(r *Response, to node.ID, raw []byte) {
	// An unacknowledged peer's base is the zero one, whose hash no
	// checkpoint has (hashOf is never 0) and whose raw is nil.
	b := m.acked[to]
	switch {
	case b.hash == r.Hash && bytes.Equal(b.raw, raw):
		r.Encoding, r.Base = EncodingSame, b.hash
	case m.cfg.DisableCompression:
		r.Encoding, r.State = EncodingRaw, raw
	default:
		m.compressState(r, raw, b)
	}
}

// compressState sets r's State to a zstd frame of raw, a delta against the
// acknowledged base b unless deltas are off, or to raw itself when
// compression fails or does not pay.
func (m *Manager) compressState(r *Response, raw []byte, b base) {
	var dict []byte
	if !m.cfg.DisableDelta {
		dict = b.raw
	}
	out, err := m.zstdFrame(raw, dict)
	switch {
	case err != nil || len(out) >= len(raw):
		r.Encoding, r.State = EncodingRaw, raw
	case dict != nil:
		r.Encoding, r.Base, r.State = EncodingDelta, b.hash, out
	default:
		r.Encoding, r.State = EncodingZstd, out
	}
}

// zstdFrame compresses raw with the manager's codec, against dict when it
// is non-nil.
func (m *Manager) zstdFrame(raw, dict []byte) ([]byte, error) {
	c, err := m.compressor()
	if err != nil {
		return nil, err
	}
	return c.compress(nil, raw, dict)
}

// wireSize is the size the bandwidth caps charge for r: its payload and
// recorded messages plus fixed overheads.
func (r *Response) wireSize() int {
	size := 64 + len(r.State)
	for _, c := range r.Channels {
		size += 16
		for _, x := range c.Msgs {
			size += 16 + len(x.Type) + len(x.Body)
		}
	}
	return size
}

// countResponse accounts a Response sent: size bytes on the wire for a
// checkpoint of rawLen bytes.
func (m *Manager) countResponse(r *Response, size, rawLen int) {
	m.stats.Responses++
	m.stats.ResponseBytes += int64(size)
	m.stats.StateBytes += int64(len(r.State))
	m.stats.RawStateBytes += int64(rawLen)
	switch r.Encoding {
	case EncodingSame:
		m.stats.Unchanged++
	case EncodingDelta:
		m.stats.Deltas++
	}
}

// compressor returns the manager's codec, built on first use.
func (m *Manager) compressor() (*codec, error) {
	if m.codec == nil {
		c, err := newCodec(m.cfg.MaxCheckpointSize)
		if err != nil {
			return nil, err
		}
		m.codec = c
	}
	return m.codec, nil
}

func (m *Manager) absBurst() float64 {
	return m.cfg.BandwidthBits / 8 * m.cfg.Burst.Seconds()
}

func (m *Manager) fracBurst() float64 { return max(m.absBurst(), 64<<10) }

// allow charges size bytes against the bandwidth caps, reporting whether
// both allow it.
func (m *Manager) allow(size int) bool {
	m.refill()
	s := float64(size)
	caps := [...]bandwidthCap{{m.cfg.BandwidthBits > 0, &m.absTokens}, {m.cfg.BandwidthFraction > 0, &m.fracTokens}}
	for _, c := range caps {
		if c.on && *c.tokens < s {
			return false
		}
	}
	for _, c := range caps {
		if c.on {
			*c.tokens -= s
		}
	}
	return true
}

// bandwidthCap is one of the bandwidth caps (Config.BandwidthBits,
// Config.BandwidthFraction): whether it is on, and its bucket's bytes.
type bandwidthCap struct {
	on     bool
	tokens *float64
}

// refill tops the absolute cap's bucket up for the time since the last
// refill, up to its burst.
func (m *Manager) refill() {
	if dt := m.now.Sub(m.refilled); dt > 0 {
		m.absTokens = min(m.absTokens+m.cfg.BandwidthBits/8*dt.Seconds(), m.absBurst())
		m.refilled = m.now
	}
}

func (m *Manager) onAck(from node.ID, a Ack) {
	for _, b := range m.sent[from] {
		if b.hash == a.Hash {
			m.acked[from] = b
			return
		}
	}
	delete(m.acked, from) // see Ack: the requester has no usable base
}
