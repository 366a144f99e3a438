package cache

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The roles, by node ID: node Origin owns the value, node Mirror serves
// reads of it, every other node is a cache.
const (
	Origin node.ID = 1
	Mirror node.ID = 2
)

// The timers: the origin writes every WriteMin plus up to WriteJitter; a
// cache refreshes its copy every RefreshEvery, and subscribes again
// ResubscribeAfter its connection to the origin broke.
const (
	WriteMin         = 200 * time.Millisecond
	WriteJitter      = 500 * time.Millisecond
	RefreshEvery     = 300 * time.Millisecond
	ResubscribeAfter = time.Second
)

// Subscribe asks the origin for the invalidations of the value.
type Subscribe struct{}

// Store carries a new version of the value from the origin to the mirror.
type Store struct{ Version uint64 }

// Invalidate tells a cache that version Version supersedes its copy.
type Invalidate struct{ Version uint64 }

// Fetch asks the mirror for the value.
type Fetch struct{}

// Data is the mirror's answer: the version it has.
type Data struct{ Version uint64 }

// MessageType implements node.Message.
func (Subscribe) MessageType() string { return "zoo-cache.Subscribe" }

// MessageType implements node.Message.
func (Store) MessageType() string { return "zoo-cache.Store" }

// MessageType implements node.Message.
func (Invalidate) MessageType() string { return "zoo-cache.Invalidate" }

// MessageType implements node.Message.
func (Fetch) MessageType() string { return "zoo-cache.Fetch" }

// MessageType implements node.Message.
func (Data) MessageType() string { return "zoo-cache.Data" }

// Spec returns the invalidation cache: with the planted bug (fixed false:
// a cache takes any Data) or corrected (a cache refuses Data older than an
// invalidation it has seen, and fetches again).
func Spec(fixed bool) node.Spec {
	return node.Spec{
		Name:     "zoo-cache",
		New:      func() node.Service { return &State{fixed: fixed} },
		Messages: []node.Message{Subscribe{}, Store{}, Invalidate{}, Fetch{}, Data{}},
		Properties: []node.Property{
			node.Always("NoStaleRead", noStaleRead),
			node.Eventually("CachesFresh", cachesFresh),
		},
	}
}

// Workload gives no application calls: the origin writes and the caches
// refresh on their own timers.
func Workload(id node.ID, restart bool) []node.Message { return nil }

// State is a node's state; each role uses its own fields.
type State struct {
	// HandleApp does nothing: the cache takes no calls.
	node.NopHandlers

	// Version is the origin's latest version, or the mirror's copy of it.
	// Both keep it on disk (Recover).
	Version uint64
	// Subscribers are the caches the origin invalidates (on disk).
	Subscribers []node.ID
	// Cached is a cache's copy, Valid whether it may serve it, Seen the
	// newest version an invalidation announced to it.
	Cached, Seen uint64
	Valid        bool

	fixed bool
}

// String is the state on one line.
func (s *State) String() string {
	return fmt.Sprintf("version=%d subscribers=%v cached=%d seen=%d valid=%v",
		s.Version, s.Subscribers, s.Cached, s.Seen, s.Valid)
}

// Recover implements node.Durable: the origin and the mirror keep the
// value's version, and the origin its subscribers, on disk.
func (s *State) Recover(previous node.Service) {
	if p, ok := previous.(*State); ok {
		s.Version = p.Version
		s.Subscribers = append([]node.ID(nil), p.Subscribers...)
	}
}

// Init implements node.Service: the origin starts writing; a cache
// subscribes and fetches its first copy.
func (s *State) Init(env node.Env) {
	switch env.Self() {
	case Origin:
		s.armWrite(env)
	case Mirror:
	default:
		env.Send(Origin, Subscribe{})
		env.Send(Mirror, Fetch{})
		env.SetTimer("refresh", RefreshEvery)
	}
}

// HandleMessage implements node.Service.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch m := msg.(type) {
	case Subscribe: // at the origin
		for _, id := range s.Subscribers {
			if id == from {
				return
			}
		}
		s.Subscribers = append(s.Subscribers, from)
	case Store: // at the mirror
		if m.Version > s.Version {
			s.Version = m.Version
		}
	case Fetch: // at the mirror
		env.Send(from, Data{Version: s.Version})
	case Invalidate: // at a cache
		if m.Version > s.Seen {
			s.Seen = m.Version
		}
		if s.Cached < s.Seen {
			s.Valid = false
			env.Send(Mirror, Fetch{})
		}
	case Data: // at a cache
		s.data(env, m.Version)
	}
}

// data installs a copy from the mirror.
func (s *State) data(env node.Env, version uint64) {
	// The bug is the missing check: the mirror's answer may have been
	// overtaken by an invalidation the origin sent after the mirror
	// answered, and the planted bug takes it anyway.
	if s.fixed && version < s.Seen {
		env.Send(Mirror, Fetch{}) // the mirror has not got the newer version yet
		return
	}
	s.Cached, s.Valid = version, true
}

// HandleTimer implements node.Service: the origin writes a new version; a
// cache refreshes its copy, or subscribes again.
func (s *State) HandleTimer(env node.Env, name string) {
	switch name {
	case "write":
		s.Version++
		env.Send(Mirror, Store{Version: s.Version})
		for _, c := range s.Subscribers {
			env.Send(c, Invalidate{Version: s.Version})
		}
		s.armWrite(env)
	case "refresh":
		env.Send(Mirror, Fetch{})
		env.SetTimer("refresh", RefreshEvery)
	case "resubscribe":
		env.Send(Origin, Subscribe{})
	}
}

// HandleTransportError implements node.Service: a cache subscribes again,
// ResubscribeAfter later, to an origin whose connection broke (the origin
// may have restarted, or be down a while); the refresh timer fetches
// again.
func (s *State) HandleTransportError(env node.Env, peer node.ID) {
	if peer == Origin && env.Self() != Mirror && env.Self() != Origin && !env.TimerScheduled("resubscribe") {
		env.SetTimer("resubscribe", ResubscribeAfter)
	}
}

// armWrite schedules the origin's next write.
func (s *State) armWrite(env node.Env) {
	env.SetTimer("write", WriteMin+time.Duration(env.Rand().IntN(int(WriteJitter/time.Millisecond)))*time.Millisecond)
}

// noStaleRead: a cache never serves a copy older than an invalidation it
// has processed.
func noStaleRead(v node.View) error {
	for _, id := range v.Nodes() {
		if c, ok := v.Service(id).(*State); ok && id != Origin && id != Mirror && c.Valid && c.Cached < c.Seen {
			return fmt.Errorf("%v serves version %d after an invalidation by version %d", id, c.Cached, c.Seen)
		}
	}
	return nil
}

// cachesFresh: eventually every cache serves the origin's version.
func cachesFresh(v node.View) error {
	o, ok := v.Service(Origin).(*State)
	if !ok {
		return nil
	}
	for _, id := range v.Nodes() {
		if c, ok := v.Service(id).(*State); ok && id != Origin && id != Mirror && (!c.Valid || c.Cached != o.Version) {
			return fmt.Errorf("%v serves version %d (valid %v), the origin is at %d", id, c.Cached, c.Valid, o.Version)
		}
	}
	return nil
}

// Clone implements node.Cloner: the explorer copies a state on every
// transition.
func (s *State) Clone() node.Service {
	c := *s
	c.Subscribers = slices.Clone(s.Subscribers)
	return &c
}
