package snapshot

import (
	"cmp"

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
	if cn <= m.window() {
		return cn, nil
	}
	if cn > MaxCN {
		m.stats.BadMessages++
		m.stats.CNRejected++
		return m.cn, nil
	}
	if peer != m.self {
		m.claim(peer, cn)
	}
	if v, ok := m.corroborated(); ok {
		if err := m.take(v, CheckpointForced); err != nil {
			return m.cn, err
		}
		// Messages handled before the jump carried numbers up to v that
		// were not adopted: this checkpoint is not the node's state at
		// any cut up to v, so requests for those cuts are refused, as
		// after a reset.
		m.prunedCN = max(m.prunedCN, v)
		m.stats.CNCaughtUp++
		m.dropClaims()
		if cn <= m.window() {
			return cn, nil
		}
	}
	m.stats.CNRejected++
	return m.cn, nil
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
		top, found := "", false
		for k, c := range m.claims {
			// Ties by key: map order must not leak out.
			if !found || c > m.claims[top] || (c == m.claims[top] && cmp.Less(k, top)) {
				top, found = k, true
			}
		}
		delete(m.claims, top)
	}
	m.claims[key] = max(m.claims[key], cn)
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
