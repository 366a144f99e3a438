package live

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Proof of membership. Without a gossip key anyone can send memberlist an
// `alive` message with well-formed metadata, and memberlist keeps every
// member it is told of: the soak's flood of 50,000 such packets put ~52,000
// members in every node's table (+113 MB), which memberlist probes one at a
// time, so a SIGKILLed real member stayed "alive" for 98 s. A member is
// now admitted only once it proved itself on the service transport: this
// node dialled the service address its metadata names and the hello there
// answered with its ID (and cluster label). One address proves one ID (the
// one it answers with), so IDs sharing an address are one member.
//
// NotifyAlive runs under memberlist's lock and must not block: an unproven
// member is refused and its proof queued (at most maxPendingProofs at once,
// maxConcurrentProofs dialling). Once proved, this node exchanges state
// with it at the gossip address its alive message gave (a push/pull, as a
// join does), which admits it. Waiting for memberlist instead was too
// slow: an alive message goes to only RetransmitMult·⌈log10(n+1)⌉ nodes
// in all and a refusing node does not pass it on, so most nodes heard a
// restarted member once, refused it, and admitted it only at a push/pull
// up to PushPullInterval later; meanwhile they could not send to it, and
// the crash test's five-node RandTree clusters took more than a minute to
// re-form after a kill (bench/crash). The push/pull goes only to members
// that answered on the service transport with their ID, once per proof;
// memberlist's failure detector would probe the same address anyway.
//
// An address whose proof failed is not dialled again for proofBackoff; a
// proof asked meanwhile waits for the backoff to end (one per address)
// rather than being dropped. The member a proof fails for is often a real
// one that is down: a node that (re)started while a peer was killed
// learns that peer, still alive in the others' tables, from its join's
// push/pull, dials it and is refused; the peer's own alive messages when
// it is back a moment later used to be dropped within the backoff (then
// 10 s), and it was admitted only at a push/pull. The backoff does not
// bound a flood (each fake address is proved once whatever the backoff;
// maxPendingProofs and maxConcurrentProofs do), only repeated dials of
// one address, so it is a second.
//
// A join's push/pull (NotifyMerge) proves its members at once, in
// parallel, within mergeProofTimeout, so a joining node learns the
// cluster without delay; a member that fails there is refused alone, not
// the merge. With a gossip key (RuntimeConfig.Gossip.SecretKey, Keyring) only
// key holders gossip, and members need no proof.

const (
	maxPendingProofs    = 256
	maxConcurrentProofs = 8
	maxProvenMembers    = 4096
	maxFailedProofs     = 4096
	proofBackoff        = time.Second
	mergeProofTimeout   = time.Second
)

// errUnproven is wrapped by the refusal of a member not proved yet.
var errUnproven = errors.New("live: member not yet proved on the service transport")

// prover keeps the members proved on the service transport and proves new
// ones. Safe for concurrent use.
type prover struct {
	// probe dials addr and returns its hello (transport.probe).
	probe func(ctx context.Context, addr string) (hello, error)
	ctx   context.Context
	wg    *sync.WaitGroup
	now   func() time.Time

	mu      sync.Mutex
	proven  map[node.ID]string // id → the service address it answered at
	owner   map[string]node.ID // address → the id that answered there
	pending map[node.ID]bool
	failed  map[string]time.Time // address → when its proof failed
	waiting map[string]bool      // addresses with a proof waiting out the backoff
	sem     chan struct{}
	// backoff is how long a failed address is not dialled again
	// (proofBackoff; tests change it).
	backoff time.Duration

	// pushPull, when set (setPushPull), exchanges state with the member
	// at a gossip address, so that memberlist admits a member proved
	// after its alive message was refused.
	pushPull func(gossip string) error

	// Counters for Status: alive messages refused unproven, proofs that
	// succeeded and failed.
	refused, proofs, failures atomic.Uint64
	// pushPulls counts the exchanges after a proof that succeeded.
	pushPulls atomic.Uint64
}

// setPushPull sets the exchange request uses after a proof (memberlist
// exists only once the prover does).
func (p *prover) setPushPull(f func(gossip string) error) {
	p.mu.Lock()
	p.pushPull = f
	p.mu.Unlock()
}

func newProver(ctx context.Context, wg *sync.WaitGroup, probe func(context.Context, string) (hello, error)) *prover {
	return &prover{probe: probe, ctx: ctx, wg: wg, now: time.Now,
		proven: map[node.ID]string{}, owner: map[string]node.ID{}, pending: map[node.ID]bool{},
		failed: map[string]time.Time{}, waiting: map[string]bool{}, sem: make(chan struct{}, maxConcurrentProofs),
		backoff: proofBackoff}
}

// vouched reports whether id proved itself at addr.
func (p *prover) vouched(id node.ID, addr string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.proven[id] == addr
}

// record notes that the hello at addr answered with id (a proof, or a
// join probe).
func (p *prover) record(id node.ID, addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.owner[addr]; ok && old != id {
		delete(p.proven, old) // the address answers for another ID now
	}
	if prev, ok := p.proven[id]; ok && prev != addr {
		delete(p.owner, prev)
	}
	if _, ok := p.proven[id]; !ok && len(p.proven) >= maxProvenMembers {
		return
	}
	p.proven[id], p.owner[addr] = addr, id
	delete(p.failed, addr)
}

// request queues a proof of id at addr unless one is queued or the queue
// is full; once proved, the member is asked for a push/pull at gossip (its
// memberlist address; none if empty). An address whose proof failed
// within the backoff is not dialled again before the backoff ends: the
// proof waits for it (one waiting proof per address). It never blocks.
func (p *prover) request(id node.ID, addr, gossip string) {
	if p.ctx.Err() != nil {
		return // stopping: memberlist's last gossip proves nothing more
	}
	wait, ok := p.reserve(id, addr)
	if !ok {
		return
	}
	p.wg.Add(1)
	go p.runProof(id, addr, gossip, wait)
}

// reserve marks a proof of id at addr pending and returns how long it
// must wait for addr's backoff to end; false (nothing marked) when a
// proof of id is pending already, the queue is full, or another proof
// waits out addr's backoff.
func (p *prover) reserve(id node.ID, addr string) (wait time.Duration, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending[id] || len(p.pending) >= maxPendingProofs {
		return 0, false
	}
	if wait = p.backoffLeft(addr); wait > 0 {
		if p.waiting[addr] {
			return 0, false
		}
		p.waiting[addr] = true
	}
	p.pending[id] = true
	return wait, true
}

// backoffLeft returns what is left of addr's backoff after its failed
// proof (zero or less when none is left or none failed). p.mu must be
// held.
func (p *prover) backoffLeft(addr string) time.Duration {
	at, ok := p.failed[addr]
	if !ok {
		return 0
	}
	return p.backoff - p.now().Sub(at)
}

// runProof is the goroutine of a proof request reserved: it waits out
// the backoff (wait), then for one of maxConcurrentProofs slots, proves
// id at addr and, once proved, asks the member for a push/pull at gossip
// (none if empty).
func (p *prover) runProof(id node.ID, addr, gossip string, wait time.Duration) {
	defer p.wg.Done()
	if wait > 0 {
		p.waitBackoff(addr, wait)
	}
	select {
	case p.sem <- struct{}{}:
	case <-p.ctx.Done():
		p.done(id)
		return
	}
	defer func() { <-p.sem }()
	if p.ctx.Err() != nil {
		p.done(id)
		return
	}
	err := p.prove(p.ctx, id, addr)
	p.done(id)
	if err == nil && gossip != "" {
		p.pushPullWith(gossip)
	}
}

// waitBackoff waits for wait, what is left of addr's backoff (or until
// the prover stops), then lets another proof of addr wait.
func (p *prover) waitBackoff(addr string, wait time.Duration) {
	t := time.NewTimer(wait)
	select {
	case <-t.C:
	case <-p.ctx.Done():
		t.Stop()
	}
	p.mu.Lock()
	delete(p.waiting, addr)
	p.mu.Unlock()
}

// pushPullWith exchanges state with a member just proved, at its gossip
// address, once memberlist exists (setPushPull) and unless the prover is
// stopping; a successful exchange is counted.
func (p *prover) pushPullWith(gossip string) {
	p.mu.Lock()
	pushPull := p.pushPull
	p.mu.Unlock()
	if pushPull != nil && p.ctx.Err() == nil && pushPull(gossip) == nil {
		p.pushPulls.Add(1)
	}
}

func (p *prover) done(id node.ID) {
	p.mu.Lock()
	delete(p.pending, id)
	p.mu.Unlock()
}

// prove dials addr and records id there if the hello answers with id.
func (p *prover) prove(ctx context.Context, id node.ID, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, mergeProofTimeout)
	defer cancel()
	h, err := p.probe(ctx, addr)
	if err == nil && h.id != id {
		err = fmt.Errorf("live: %s answers as %v, not %v", addr, h.id, id)
	}
	if err != nil {
		p.failures.Add(1)
		p.mu.Lock()
		if len(p.failed) >= maxFailedProofs {
			clear(p.failed) // forget old failures rather than grow
		}
		p.failed[addr] = p.now()
		p.mu.Unlock()
		return err
	}
	p.proofs.Add(1)
	p.record(id, addr)
	return nil
}

// proveAll proves the given members (id → address) in parallel, at most
// maxConcurrentProofs at a time, within mergeProofTimeout each.
func (p *prover) proveAll(members map[node.ID]string) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxConcurrentProofs)
	for id, addr := range members {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			p.prove(p.ctx, id, addr)
		})
	}
	wg.Wait()
}
