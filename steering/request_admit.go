package steering

import (
	"slices"
	"strconv"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// pendingRequest is a request the owner admitted, waiting for its round.
type pendingRequest struct {
	from    node.ID
	req     Request
	expires time.Time
}

// requestDesk is the owner's side of steering requests on the core
// goroutine: who may ask, how often, and what waits for the next round.
// The Layer owns it; the round takes the pending requests under Layer.mu.
type requestDesk struct {
	cfg     RequestConfig
	recent  map[node.ID][]time.Time // admissions per peer within the window
	pending []pendingRequest
}

// admit decides on a request from a peer at now: it returns "" and
// queues the request, or the reason it is refused. members are the
// owner's neighbourhood as it knows it.
func (d *requestDesk) admit(self node.ID, mode Mode, from node.ID, req Request, now time.Time, members []node.ID) string {
	if why := d.refuseOutright(self, mode, from, req, members); why != "" {
		return why
	}
	ts := d.recentWithin(from, now)
	if len(ts) >= d.cfg.PerPeer {
		d.recent[from] = ts
		return RefusedRate + ": more than " + strconv.Itoa(d.cfg.PerPeer) + " requests from " + from.String() + " within " + d.cfg.Window.String()
	}
	if len(d.pending) >= d.cfg.MaxPending {
		return RefusedRate + ": " + strconv.Itoa(d.cfg.MaxPending) + " requests already wait"
	}
	if d.recent == nil {
		d.recent = map[node.ID][]time.Time{}
	}
	d.recent[from] = append(ts, now)
	d.pending = append(d.pending, pendingRequest{from: from, req: req, expires: now.Add(d.cfg.TTL)})
	return ""
}

// refuseOutright returns why a request is refused whatever the rates:
// requests off, the owner not steering, the request malformed, its
// sender no neighbour; "" if none applies.
func (d *requestDesk) refuseOutright(self node.ID, mode Mode, from node.ID, req Request, members []node.ID) string {
	switch {
	case d.cfg.Off:
		return RefusedOff
	case mode != Steer:
		return RefusedMode
	}
	if why := req.validate(self, d.cfg.MaxPath); why != "" {
		return why
	}
	if !slices.Contains(members, from) {
		return RefusedStranger
	}
	return ""
}

// recentWithin returns from's admissions within the window before now.
func (d *requestDesk) recentWithin(from node.ID, now time.Time) []time.Time {
	ts := d.recent[from]
	cut := now.Add(-d.cfg.Window)
	i := 0
	for i < len(ts) && !ts[i].After(cut) {
		i++
	}
	return ts[i:]
}

// take hands the pending requests to a round and forgets them.
func (d *requestDesk) take() []pendingRequest {
	out := d.pending
	d.pending = nil
	return out
}

// members is the owner's neighbourhood: the service's neighbours and the
// members of its newest snapshot.
func (l *Layer) members() []node.ID {
	var ids []node.ID
	if nb, ok := l.host.Service().(node.Neighborer); ok {
		ids = append(ids, nb.Neighbors(l.self)...)
	}
	if s := l.last; s != nil {
		for _, n := range s.Nodes {
			ids = append(ids, n.Node)
		}
	}
	return ids
}
