package emulation

import (
	"time"
)

// eventKind classifies processed events for Result.EventsByKind.
type eventKind uint8

const (
	kindInit eventKind = iota
	kindMessage
	kindTimer
	kindApp
	kindTransportError
	kindReset
	kindDown
	kindUp
	kindDrop
	kindBreak
	kindRefused
	numKinds
)

// kindNames are the keys of Result.EventsByKind (and the trace's words).
var kindNames = [numKinds]string{
	kindInit:           "init",
	kindMessage:        "message",
	kindTimer:          "timer",
	kindApp:            "app",
	kindTransportError: "transport-error",
	kindReset:          "reset",
	kindDown:           "down",
	kindUp:             "up",
	kindDrop:           "drop",
	kindBreak:          "break",
	kindRefused:        "send-refused",
}

type counters struct {
	byKind                                                 [numKinds]int64
	sent, delivered, dropped, retransmits, transportErrors int64
	resets, leaves, silentLeaves, rejoins, churnSkipped    int64
	breaks, breaksSkipped                                  int64
	protocol, filtered                                     int64
	dgSent, dgDelivered, dgLost, dgDropped, dgFiltered     int64
	// steering requests and answers sent, and their wire bytes
	requestMsgs, requestBytes, answerMsgs, answerBytes int64
}

func (c *counters) count(k eventKind) { c.byKind[k]++ }

// Result summarises a run. Its JSON field names are stable (the CLI prints
// it with --json); durations are integers in nanoseconds.
type Result struct {
	// Seed is the run's seed: rerunning with it reproduces the run.
	Seed uint64 `json:"seed"`
	// Nodes is the number of nodes.
	Nodes int `json:"nodes"`
	// VirtualDuration is the virtual time emulated, since Epoch.
	VirtualDuration time.Duration `json:"virtual_duration_ns"`
	// WallTime is the wall-clock time Run took (zero outside Run).
	WallTime time.Duration `json:"wall_time_ns"`
	// Events is the number of processed events (trace lines).
	Events int64 `json:"events"`
	// EventsByKind splits Events: init, message, timer, app,
	// transport-error, reset, up, down, drop, break, send-refused (a
	// HandleSendRefused step). Every key is present.
	EventsByKind map[string]int64 `json:"events_by_kind"`
	// Messages counts service messages (and, apart, datagrams).
	Messages MessageStats `json:"messages"`
	// TransportErrors is the number of transport errors delivered to
	// services.
	TransportErrors int64 `json:"transport_errors"`
	// Resets is the number of times a node lost its state (Reset, Down and
	// churn leaves).
	Resets int64 `json:"resets"`
	// Churn counts churn events.
	Churn ChurnStats `json:"churn"`
	// Breaks counts the scheduled connection breaks (Config.Breaks).
	Breaks BreakStats `json:"breaks"`
	// Nemesis counts the lasting faults (Config.Nemesis and the scenario
	// methods Crash, PartitionGroups, CutOneWay, JumpClock); nil, and
	// absent from the JSON, when there were none.
	Nemesis *NemesisStats `json:"nemesis,omitempty"`
	// Safety has one entry per safety property, in spec order.
	Safety []SafetyResult `json:"safety"`
	// Liveness has one entry per liveness property, in spec order,
	// evaluated on the final state.
	Liveness []LivenessResult `json:"liveness"`
	// Timed has one entry per liveness and bounded property, in spec
	// order, judged over the whole run: availability and outages
	// (judge.go). Absent for a service that declares neither.
	Timed []TimedResult `json:"timed,omitempty"`
	// History has one entry per history property, in spec order: its
	// verdict on the run's client history (history.go). Absent for a
	// service that declares none.
	History []HistoryResult `json:"history,omitempty"`
	// Snapshots sums the snapshot managers' work (nil without
	// Config.Snapshots).
	Snapshots *SnapshotResult `json:"snapshots,omitempty"`
	// Steering sums the steering controllers' work (nil without
	// Config.Steering).
	Steering *SteeringResult `json:"steering,omitempty"`
	// Links is the link model's account (bytes on the access links,
	// refused sends, queueing delays); nil, and absent from the JSON,
	// without bandwidth (Network.Uplink and Downlink both zero).
	Links *LinkStats `json:"links,omitempty"`
}

// MessageStats counts service messages.
type MessageStats struct {
	// Sent counts Env.Send calls and the Env.TrySend calls the network
	// accepted (a refused one is counted in Links.Refused only).
	Sent int64 `json:"sent"`
	// Delivered counts messages handed to a service.
	Delivered int64 `json:"delivered"`
	// Dropped counts messages lost to a reset, a down node, a stale, broken
	// or refused connection. Every drop is covered by a transport error
	// scheduled for its sender (unless the sender itself reset first).
	Dropped int64 `json:"dropped"`
	// Protocol counts the layers' own messages their layers consumed
	// (snapshot protocol messages, steering requests and answers).
	Protocol int64 `json:"protocol,omitempty"`
	// Filtered counts messages that arrived but that steering (a filter or
	// the immediate safety check) kept from the service.
	Filtered int64 `json:"filtered,omitempty"`
	// InFlight is Sent - Delivered - Dropped - Protocol - Filtered, plus
	// the copies Delivery.Duplicated made: messages still queued.
	InFlight int64 `json:"in_flight"`
	// Retransmissions counts packet losses repaired by retransmission.
	Retransmissions int64 `json:"retransmissions"`
	// Datagrams counts the datagrams (node.Env.SendDatagram), which the
	// counts above leave out; nil when the run sent none.
	Datagrams *DatagramStats `json:"datagrams,omitempty"`
	// Delivery counts what Config.Delivery did to declared unreliable
	// messages; nil when it could do nothing.
	Delivery *DeliveryStats `json:"delivery,omitempty"`
}

// DatagramStats counts datagrams. Deliveries are also message events
// (EventsByKind "message"), losses and drops "drop" events.
type DatagramStats struct {
	// Sent counts Env.SendDatagram calls.
	Sent int64 `json:"sent"`
	// Delivered counts datagrams handed to a service.
	Delivered int64 `json:"delivered"`
	// Lost counts datagrams the network lost (the link's loss
	// probability; a datagram is never retransmitted).
	Lost int64 `json:"lost"`
	// Dropped counts datagrams dropped because the receiver was down,
	// reset before the arrival, partitioned away or no node at all, or by
	// a DropNext rule. No datagram ever causes a transport error.
	Dropped int64 `json:"dropped"`
	// Filtered counts datagrams that arrived but that steering kept from
	// the service.
	Filtered int64 `json:"filtered,omitempty"`
	// InFlight is Sent - Delivered - Lost - Dropped - Filtered: datagrams
	// still queued.
	InFlight int64 `json:"in_flight"`
}

// ChurnStats counts churn events.
type ChurnStats struct {
	// Leaves is the number of churn leaves; SilentLeaves of them lost
	// their RST.
	Leaves       int64 `json:"leaves"`
	SilentLeaves int64 `json:"silent_leaves"`
	// Rejoins is the number of churned nodes that came back.
	Rejoins int64 `json:"rejoins"`
	// Skipped counts churn events that found no live node.
	Skipped int64 `json:"skipped"`
}

// SafetyResult is the observer's account of one safety property.
type SafetyResult struct {
	Name string `json:"name"`
	// ViolatedStates is the number of post-event global states in which
	// the property was violated (the paper's "states that contain
	// inconsistencies").
	ViolatedStates int64 `json:"violated_states"`
	// Episodes is the number of holds→violated transitions.
	Episodes int64 `json:"episodes"`
	// FirstViolation is the virtual time of the first violated state;
	// meaningful only when ViolatedStates > 0.
	FirstViolation time.Duration `json:"first_violation_ns"`
	// FirstEvent is the event that produced the first violated state
	// ("n13 message randtree.Join from n9").
	FirstEvent string `json:"first_event,omitempty"`
	// FirstError is the property's error in that state.
	FirstError string `json:"first_error,omitempty"`
}

// LivenessResult is a liveness property evaluated on the final state.
type LivenessResult struct {
	Name  string `json:"name"`
	Holds bool   `json:"holds"`
	// Error is the property's error when it does not hold.
	Error string `json:"error,omitempty"`
}

// Result returns the run's result so far; the liveness properties are
// evaluated on the current state. WallTime is zero (Run fills it).
func (e *Emulator) Result() Result {
	r := Result{
		Seed:            e.cfg.Seed,
		Nodes:           e.cfg.Nodes,
		VirtualDuration: e.now,
		EventsByKind:    make(map[string]int64, numKinds),
		Messages: MessageStats{
			Sent:            e.st.sent,
			Delivered:       e.st.delivered,
			Dropped:         e.st.dropped,
			Protocol:        e.st.protocol,
			Filtered:        e.st.filtered,
			InFlight:        e.st.sent + e.duplicated() - e.st.delivered - e.st.dropped - e.st.protocol - e.st.filtered,
			Retransmissions: e.st.retransmits,
			Delivery:        e.deliveryStats(),
		},
		TransportErrors: e.st.transportErrors,
		Resets:          e.st.resets,
		Churn: ChurnStats{
			Leaves:       e.st.leaves,
			SilentLeaves: e.st.silentLeaves,
			Rejoins:      e.st.rejoins,
			Skipped:      e.st.churnSkipped,
		},
		Breaks:    BreakStats{Broken: e.st.breaks, Skipped: e.st.breaksSkipped},
		Safety:    make([]SafetyResult, 0, len(e.safety)),
		Liveness:  e.evalLiveness(),
		Timed:     e.timedResults(),
		History:   e.historyResults(),
		Snapshots: e.snapshotResult(),
		Steering:  e.steeringResult(),
		Nemesis:   e.nemesisResult(),
	}
	if s := &e.st; s.dgSent > 0 {
		r.Messages.Datagrams = &DatagramStats{Sent: s.dgSent, Delivered: s.dgDelivered, Lost: s.dgLost, Dropped: s.dgDropped,
			Filtered: s.dgFiltered, InFlight: s.dgSent - s.dgDelivered - s.dgLost - s.dgDropped - s.dgFiltered}
	}
	if e.linked() {
		l := e.links.stats()
		r.Links = &l
	}
	for k, n := range e.st.byKind {
		r.Events += n
		r.EventsByKind[kindNames[k]] = n
	}
	for _, s := range e.safety {
		r.Safety = append(r.Safety, s.res)
	}
	return r
}
