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
// maxConcurrentProofs dialling, a failed address not retried for
// proofBackoff), and memberlist's retransmissions of its alive message, or
// its next push/pull, admit it once proved. A join's push/pull
// (NotifyMerge) proves its members at once, in parallel, within
// mergeProofTimeout, so a joining node learns the cluster without delay;
// a member that fails there is refused alone, not the merge. With a
// gossip key (RuntimeConfig.SecretKey, Keyring) only key holders gossip,
// and members need no proof.

const (
	maxPendingProofs    = 256
	maxConcurrentProofs = 8
	maxProvenMembers    = 4096
	maxFailedProofs     = 4096
	proofBackoff        = 10 * time.Second
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
	sem     chan struct{}

	// Counters for Status: alive messages refused unproven, proofs that
	// succeeded and failed.
	refused, proofs, failures atomic.Uint64
}

func newProver(ctx context.Context, wg *sync.WaitGroup, probe func(context.Context, string) (hello, error)) *prover {
	return &prover{probe: probe, ctx: ctx, wg: wg, now: time.Now,
		proven: map[node.ID]string{}, owner: map[string]node.ID{}, pending: map[node.ID]bool{},
		failed: map[string]time.Time{}, sem: make(chan struct{}, maxConcurrentProofs)}
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

// request queues a proof of id at addr unless one is queued, the queue is
// full, or addr failed within proofBackoff. It never blocks.
func (p *prover) request(id node.ID, addr string) {
	if p.ctx.Err() != nil {
		return // stopping: memberlist's last gossip proves nothing more
	}
	p.mu.Lock()
	now := p.now()
	if at, ok := p.failed[addr]; p.pending[id] || len(p.pending) >= maxPendingProofs || ok && now.Sub(at) < proofBackoff {
		p.mu.Unlock()
		return
	}
	p.pending[id] = true
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		select {
		case p.sem <- struct{}{}:
		case <-p.ctx.Done():
			p.done(id)
			return
		}
		defer func() { <-p.sem }()
		p.prove(p.ctx, id, addr)
		p.done(id)
	}()
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
