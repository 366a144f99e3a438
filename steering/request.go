package steering

import (
	"cmp"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// A prediction is often about another node's event: a neighbour's round
// sees that n32's handling of a refused diff, or the lock server's grant,
// starts the path to a violation, and its own filters can stop nothing of
// it. Steering then asks the node that owns the event. The rule, in both
// shells:
//
//   - The predicting node (mode Steer) derives, for a path whose earliest
//     event a filter can stop belongs to another member of the snapshot,
//     the filter at that member (remoteFilter), checks it in its own model
//     as it checks its own filters, and sends the owner a Request: the
//     filter, the path and the cut it was predicted from, beside the
//     snapshot traffic on the same connections.
//   - The owner admits a request only from a member of its neighbourhood,
//     within RequestConfig's bounds per peer and per window, and only for a
//     filter at itself; it answers every request (Answer), accepted or
//     refused with a reason.
//   - An admitted request waits for the owner's next round, which the
//     request starts: on the owner's newest snapshot if that is at least
//     as new as the request's cut, after a fresh gather otherwise. There
//     the owner replays the path on its own view, checks the filter as it
//     checks its own (the safety check of filters, the liveness walks with
//     it in place) and installs it — or refuses: the path does not lead to
//     a violation from its view, the filter does not stop it, it costs
//     liveness, the request expired.
//   - An accepted filter is the owner's: kept by its later rounds only
//     while the path still replays to a violation, subject to its own
//     intervention budget. A request can make the owner hold back an event
//     its own rounds would have held back had they seen the path, never
//     act.
//
// RequestConfig bounds it; Stats and LayerStatus count it.

// Request asks the node a filter belongs to (Filter.Node) to install it:
// the requester predicted Property's violation along Path from its
// snapshot of cut CN, and Path's first event a filter can stop is the
// owner's. A layer message (layer.Message): it travels on the
// service's connections and never reaches the service.
type Request struct {
	// ID is the requester's sequence number, echoed by the Answer.
	ID uint64
	// Filter is the filter asked for; Filter.Node is the receiver.
	Filter Filter
	// Property is the predicted violation's property and Error its error;
	// Kind is node.Safety's or node.Liveness's name.
	Property, Error, Kind string
	// Path is the predicted path from the requester's snapshot.
	Path []consequence.ActionRecord
	// CN is the checkpoint number of the requester's snapshot.
	CN uint64
	// Rank is the prediction's rank in the requester's round.
	Rank int
}

// MessageType implements node.Message.
func (Request) MessageType() string { return "steering.Request" }

// LayerMessage marks a steering message (layer.Message).
func (Request) LayerMessage() {}

// Answer is the owner's answer to a Request.
type Answer struct {
	// ID is the request's.
	ID uint64
	// Accepted is set when the owner installed the filter; Reason says
	// why it did not otherwise.
	Accepted bool
	Reason   string
}

// MessageType implements node.Message.
func (Answer) MessageType() string { return "steering.Answer" }

// LayerMessage marks a steering message (layer.Message).
func (Answer) LayerMessage() {}

// Messages returns the prototypes of steering's messages (Layer.Messages).
func Messages() []node.Message { return []node.Message{Request{}, Answer{}} }

// RequestConfig bounds steering requests, as the requester and as the
// owner. Zero fields take the defaults documented on each
// (DefaultRequestConfig); negative counts and durations are errors.
type RequestConfig struct {
	// Off turns steering requests off: no request is sent, every request
	// received is refused.
	Off bool
	// PerPeer is how many requests the owner admits from one peer within
	// Window (default 8); past it they are refused ("rate").
	PerPeer int
	// Window is PerPeer's window (default one minute).
	Window time.Duration
	// MaxPending is how many admitted requests may wait for the owner's
	// next round at once (default 16); past it they are refused.
	MaxPending int
	// TTL is how long a request stays valid after it arrives (default
	// 30 s): one its round has not taken by then is refused as expired.
	// The requester sends the same request again at most once per TTL.
	TTL time.Duration
	// MaxPath is the longest path a request may carry (default 64
	// events).
	MaxPath int
}

// Defaults of RequestConfig.
const (
	DefaultRequestsPerPeer   = 8
	DefaultRequestWindow     = time.Minute
	DefaultMaxPendingRequest = 16
	DefaultRequestTTL        = 30 * time.Second
	DefaultMaxRequestPath    = 64
)

// DefaultRequestConfig returns the defaults of a RequestConfig's zero
// fields.
func DefaultRequestConfig() RequestConfig {
	return RequestConfig{PerPeer: DefaultRequestsPerPeer, Window: DefaultRequestWindow, MaxPending: DefaultMaxPendingRequest,
		TTL: DefaultRequestTTL, MaxPath: DefaultMaxRequestPath}
}

func (c RequestConfig) withDefaults() (RequestConfig, error) {
	if min(c.PerPeer, c.MaxPending, c.MaxPath) < 0 || min(c.Window, c.TTL) < 0 {
		return c, fmt.Errorf("%w: negative RequestConfig field", ErrInvalidConfig)
	}
	d := DefaultRequestConfig()
	c.PerPeer, c.Window, c.MaxPending = cmp.Or(c.PerPeer, d.PerPeer), cmp.Or(c.Window, d.Window), cmp.Or(c.MaxPending, d.MaxPending)
	c.TTL, c.MaxPath = cmp.Or(c.TTL, d.TTL), cmp.Or(c.MaxPath, d.MaxPath)
	return c, nil
}

// Reasons an owner refuses a request (Answer.Reason starts with one).
const (
	RefusedOff       = "requests off"
	RefusedMode      = "not steering"
	RefusedMalformed = "malformed"
	RefusedStranger  = "not a neighbour"
	RefusedRate      = "rate"
	RefusedExpired   = "expired"
	RefusedNoReplay  = "no violation from my view"
	RefusedNoStop    = "the filter stops no event of the path"
	RefusedUnhelpful = "a violation remains with the filter"
	RefusedLiveness  = "the filter costs liveness"
)

// Bounds on a request's strings, checked on receipt before anything of
// the request is formatted, stored or logged: the audit's 16 requests of
// about 1 MB each took /status from 4.4 KB to 7.7 MB and grew the node's
// log by 6.7 MB. A name (property, kind, message type, timer, a path
// record's kind, type, timer and text) is at most MaxRequestName bytes,
// the error MaxRequestError; the path's message bodies are bounded by the
// frame and MaxPath.
const (
	MaxRequestName  = node.MaxShownString
	MaxRequestError = 4 << 10
)

// oversized reports the first of r's strings past its bound.
func (r Request) oversized() string {
	names := []string{r.Property, r.Kind, r.Filter.Type, r.Filter.Timer}
	for _, a := range r.Path {
		names = append(names, a.Kind, a.Type, a.Timer, a.Text)
	}
	for _, s := range names {
		if len(s) > MaxRequestName {
			return fmt.Sprintf("%s: a name of %d bytes (at most %d)", RefusedMalformed, len(s), MaxRequestName)
		}
	}
	if len(r.Error) > MaxRequestError {
		return fmt.Sprintf("%s: an error of %d bytes (at most %d)", RefusedMalformed, len(r.Error), MaxRequestError)
	}
	return ""
}

// validate checks a request received by node self: its strings bounded,
// the filter self's and well formed, the path bounded. It returns a
// reason on failure.
func (r Request) validate(self node.ID, maxPath int) string {
	if why := r.oversized(); why != "" {
		return why
	}
	if why := r.Filter.malformedFor(self); why != "" {
		return why
	}
	switch {
	case len(r.Path) == 0 || len(r.Path) > maxPath:
		return fmt.Sprintf("%s: a path of %d events (at most %d)", RefusedMalformed, len(r.Path), maxPath)
	case r.Property == "":
		return RefusedMalformed + ": no property"
	}
	return ""
}

// malformedFor returns why f is no filter node self may be asked for
// (its node another, its kind unknown, a field its kind needs missing),
// "" when it is one.
func (f Filter) malformedFor(self node.ID) string {
	switch {
	case f.Node != self:
		return fmt.Sprintf("%s: the filter is for %v", RefusedMalformed, f.Node)
	case !knownFilterKind(f.Kind):
		return fmt.Sprintf("%s: filter kind %d", RefusedMalformed, f.Kind)
	case incompleteFilter(f):
		return fmt.Sprintf("%s: incomplete filter %v", RefusedMalformed, f)
	}
	return ""
}

// knownFilterKind reports whether k is one of the filter kinds, from
// FilterMessage to FilterTransportError.
func knownFilterKind(k FilterKind) bool {
	return k >= FilterMessage && k <= FilterTransportError
}

// incompleteFilter reports whether f lacks a field its kind needs: a
// message type (message and call filters), a timer name (timer
// filters), a sender (message and transport-error filters).
func incompleteFilter(f Filter) bool {
	switch f.Kind {
	case FilterMessage:
		return f.Type == "" || f.From == node.None
	case FilterApp:
		return f.Type == ""
	case FilterTimer:
		return f.Timer == ""
	case FilterTransportError:
		return f.From == node.None
	}
	return false
}
