package steering

import "maps"

// Stats are the counters of one node's steering since its layer (or
// controller) was made. Each counter is declared once, here, in the part
// of the one component that counts it: RoundStats by a Controller's
// rounds, GateStats by the Controller that gates the node's events,
// LayerStats by the Layer around them. A Controller's Stats hold its two
// parts (its LayerStats are zero); a Layer's hold the explorer's rounds,
// the gate's events and its own. The embedded parts promote their fields,
// in Go and in JSON, so a Stats reads and encodes as one flat set of
// counters: the "steering" object of /status, the crystalball_steering_*
// metrics and, summed over the nodes by Add, emulation's steering result.
//
// A Stats is a value: its maps are its own once Controller.Stats or
// Layer.Stats returns it.
type Stats struct {
	RoundStats
	GateStats
	LayerStats
}

// RoundStats are counted by a controller's rounds.
type RoundStats struct {
	// Rounds counts the rounds explored; RoundsReused those that reused
	// the last round's outcome (RoundReport.Reused), which Rounds counts
	// too.
	Rounds       uint64 `json:"rounds"`
	RoundsReused uint64 `json:"rounds_reused"`
	// StatesExplored counts the unique states of every search of every
	// round, the liveness and safety walks' steps included.
	StatesExplored uint64 `json:"states_explored"`
	// Predicted counts the rounds' predictions by property.
	Predicted map[string]uint64 `json:"predicted"`
	// ReplayHits counts the error paths of earlier rounds that still
	// failed when replayed.
	ReplayHits uint64 `json:"replay_hits"`
	// FiltersInstalled counts the filters installed, FiltersUnhelpful
	// those whose check still found a violation (not installed), and
	// StarvingFilters the filters of restored paths that passed their
	// safety check but not the liveness guard (keepLive), and were not
	// installed.
	FiltersInstalled uint64 `json:"filters_installed"`
	FiltersUnhelpful uint64 `json:"filters_unhelpful"`
	StarvingFilters  uint64 `json:"starving_filters"`
	// Walks and WalkSteps count the liveness search's walks from
	// snapshots and every step it took (walks, probes, filter checks);
	// DeadEnds its predictions (verdict C1), which Predicted counts by
	// property too.
	Walks     uint64 `json:"walks"`
	WalkSteps uint64 `json:"walk_steps"`
	DeadEnds  uint64 `json:"dead_ends"`
	// DeadEndsConfirmed and DeadEndsRetracted count the dead ends the
	// node's own later snapshots confirmed or retracted
	// (Config.ConfirmGrace, LivenessWatch): the property evaluated on the
	// neighbourhood each round's snapshot holds, not the global state.
	// The others are still pending.
	DeadEndsConfirmed uint64 `json:"dead_ends_confirmed"`
	DeadEndsRetracted uint64 `json:"dead_ends_retracted"`
	// SafetyWalks and SafetyWalkSteps count the rounds' safety walks
	// (Config.SafetyWalks) and their steps; SafetyWalkPredictions the
	// predictions they made that the round's consequence search had not.
	SafetyWalks           uint64 `json:"safety_walks,omitempty"`
	SafetyWalkSteps       uint64 `json:"safety_walk_steps,omitempty"`
	SafetyWalkPredictions uint64 `json:"safety_walk_predictions,omitempty"`
	// RequestsProposed counts the steering requests the rounds proposed
	// to the owners of predicted events (the layer sends each at most
	// once per request TTL: LayerStats.RequestsSent);
	// RequestsAccepted and RequestsRefusedAfterCheck the rounds'
	// decisions on the requests of others the layer admitted
	// (request.go).
	RequestsProposed          uint64 `json:"requests_proposed"`
	RequestsAccepted          uint64 `json:"requests_accepted"`
	RequestsRefusedAfterCheck uint64 `json:"requests_refused_after_check"`
}

// GateStats are counted by the controller that gates the node's events.
type GateStats struct {
	// FilterHits counts the events a filter kept from the handler,
	// ImmediateChecks those the immediate safety check judged and Vetoes
	// those it kept from the handler.
	FilterHits      uint64 `json:"filter_hits"`
	ImmediateChecks uint64 `json:"immediate_checks"`
	Vetoes          uint64 `json:"vetoes"`
	// LookAheads counts the look-aheads run before risky events
	// (LookAheadConfig; a postponed event's retries are looked at again
	// and counted again), LookAheadStates the states they explored, and
	// LookAheadVetoes the events they vetoed (in Vetoes too; retries not
	// again).
	LookAheads      uint64 `json:"look_aheads"`
	LookAheadStates uint64 `json:"look_ahead_states"`
	LookAheadVetoes uint64 `json:"look_ahead_vetoes"`
	// Overrides counts events let through because their kind had been
	// kept from the handler MaxInterventions times within the window and
	// its escalation timed out (Controller.Gate).
	Overrides uint64 `json:"overrides"`
	// Escalations counts the event kinds escalated (their budget spent
	// while a filter or the immediate check still stopped them), Held the
	// events kept from the handler while escalated (retries not again;
	// they are in FilterHits or Vetoes too), Released the escalations a
	// re-check ended (no filter of a fresh round, and no veto, stops the
	// kind any more), ReleasedForLiveness the holds the liveness guard
	// ended (gate.go).
	Escalations         uint64 `json:"escalations"`
	Held                uint64 `json:"held"`
	Released            uint64 `json:"released"`
	ReleasedForLiveness uint64 `json:"released_for_liveness"`
}

// LayerStats are counted by a Layer around its controllers.
type LayerStats struct {
	// Events counts the events offered to the gate (messages, timers,
	// application calls, transport errors; retries not counted again):
	// the base of the share of actions steering changed (ChangedShare).
	Events uint64 `json:"events"`
	// Interventions counts the events kept from the handler by the source
	// and property of their explanation ("round/OneHolder",
	// "check/RootHasNoSiblings", "request/…"; retries not again).
	Interventions map[string]uint64 `json:"interventions,omitempty"`
	// RoundsCanceled counts rounds cancelled (a newer snapshot, Stop, the
	// runner's context), RoundErrors rounds that failed; SnapshotsSkipped
	// snapshots the runner dropped before any round took them.
	RoundsCanceled   uint64 `json:"rounds_canceled"`
	RoundErrors      uint64 `json:"round_errors"`
	SnapshotsSkipped uint64 `json:"snapshots_skipped"`
	// ExplorationSeconds is the time of every round as the runner
	// measured it (wall time live; charged virtual time with a
	// SyncRunner), cancelled ones included.
	ExplorationSeconds float64 `json:"exploration_seconds"`
	// RequestsSent counts the steering requests this node sent to the
	// owners of predicted events, AnswersAccepted and AnswersRefused
	// their answers; RequestsAdmitted the requests of others this node
	// admitted for a round, RequestsRefusedAtAdmission those it refused
	// at once (request.go).
	RequestsSent               uint64 `json:"requests_sent"`
	AnswersAccepted            uint64 `json:"answers_accepted"`
	AnswersRefused             uint64 `json:"answers_refused"`
	RequestsAdmitted           uint64 `json:"requests_admitted"`
	RequestsRefusedAtAdmission uint64 `json:"requests_refused_at_admission"`
	// The liveness budget (liveness_budget.go). Lifts counts the times
	// the layer lifted its steering because it had kept a property's
	// obligation open past its bound, LiftsExpired those that ended with
	// their obligation still open (the property failed without steering
	// too), LiftedSeconds the time steering was lifted (a lift in force
	// as of the layer's last evaluation), LiftsByProperty the lifts by
	// the property that caused them.
	Lifts           uint64               `json:"lifts"`
	LiftsExpired    uint64               `json:"lifts_expired"`
	LiftedSeconds   float64              `json:"lifted_seconds"`
	LiftsByProperty map[string]LiftCount `json:"lifts_by_property,omitempty"`
}

// RequestsRefused is the requests of others this node refused, at
// admission or after its round's check.
func (s Stats) RequestsRefused() uint64 {
	return s.RequestsRefusedAtAdmission + s.RequestsRefusedAfterCheck
}

// Predictions is the rounds' predictions over every property.
func (s Stats) Predictions() uint64 {
	var n uint64
	for _, v := range s.Predicted {
		n += v
	}
	return n
}

// ChangedShare is the share of the events offered to the gate that
// steering changed: (filter hits + vetoes) / events; 0 before the first.
func (s Stats) ChangedShare() float64 {
	if s.Events == 0 {
		return 0
	}
	return float64(s.FilterHits+s.Vetoes) / float64(s.Events)
}

// Add adds o's counters to s: a sum over nodes. LiftsByProperty's
// LongestFailingSeconds takes the longer of the two.
func (s *Stats) Add(o Stats) {
	s.RoundStats.add(o.RoundStats)
	s.GateStats.add(o.GateStats)
	s.LayerStats.add(o.LayerStats)
}

func (s *RoundStats) add(o RoundStats) {
	s.Rounds += o.Rounds
	s.RoundsReused += o.RoundsReused
	s.StatesExplored += o.StatesExplored
	s.Predicted = addCounts(s.Predicted, o.Predicted)
	s.ReplayHits += o.ReplayHits
	s.FiltersInstalled += o.FiltersInstalled
	s.FiltersUnhelpful += o.FiltersUnhelpful
	s.StarvingFilters += o.StarvingFilters
	s.Walks += o.Walks
	s.WalkSteps += o.WalkSteps
	s.DeadEnds += o.DeadEnds
	s.DeadEndsConfirmed += o.DeadEndsConfirmed
	s.DeadEndsRetracted += o.DeadEndsRetracted
	s.SafetyWalks += o.SafetyWalks
	s.SafetyWalkSteps += o.SafetyWalkSteps
	s.SafetyWalkPredictions += o.SafetyWalkPredictions
	s.RequestsProposed += o.RequestsProposed
	s.RequestsAccepted += o.RequestsAccepted
	s.RequestsRefusedAfterCheck += o.RequestsRefusedAfterCheck
}

func (s *GateStats) add(o GateStats) {
	s.FilterHits += o.FilterHits
	s.ImmediateChecks += o.ImmediateChecks
	s.Vetoes += o.Vetoes
	s.LookAheads += o.LookAheads
	s.LookAheadStates += o.LookAheadStates
	s.LookAheadVetoes += o.LookAheadVetoes
	s.Overrides += o.Overrides
	s.Escalations += o.Escalations
	s.Held += o.Held
	s.Released += o.Released
	s.ReleasedForLiveness += o.ReleasedForLiveness
}

func (s *LayerStats) add(o LayerStats) {
	s.Events += o.Events
	s.Interventions = addCounts(s.Interventions, o.Interventions)
	s.RoundsCanceled += o.RoundsCanceled
	s.RoundErrors += o.RoundErrors
	s.SnapshotsSkipped += o.SnapshotsSkipped
	s.ExplorationSeconds += o.ExplorationSeconds
	s.RequestsSent += o.RequestsSent
	s.AnswersAccepted += o.AnswersAccepted
	s.AnswersRefused += o.AnswersRefused
	s.RequestsAdmitted += o.RequestsAdmitted
	s.RequestsRefusedAtAdmission += o.RequestsRefusedAtAdmission
	s.Lifts += o.Lifts
	s.LiftsExpired += o.LiftsExpired
	s.LiftedSeconds += o.LiftedSeconds
	for name, c := range o.LiftsByProperty {
		if s.LiftsByProperty == nil {
			s.LiftsByProperty = map[string]LiftCount{}
		}
		sum := s.LiftsByProperty[name]
		sum.Lifts += c.Lifts
		sum.Expired += c.Expired
		sum.LongestFailingSeconds = max(sum.LongestFailingSeconds, c.LongestFailingSeconds)
		s.LiftsByProperty[name] = sum
	}
}

// clone returns s with maps of its own (Predicted never nil, so that it
// encodes as an object).
func (s Stats) clone() Stats {
	s.Predicted = maps.Clone(s.Predicted)
	if s.Predicted == nil {
		s.Predicted = map[string]uint64{}
	}
	s.Interventions = maps.Clone(s.Interventions)
	s.LiftsByProperty = maps.Clone(s.LiftsByProperty)
	return s
}

// addCounts adds o's counts to m, allocating m on the first key.
func addCounts(m, o map[string]uint64) map[string]uint64 {
	for k, v := range o {
		if m == nil {
			m = map[string]uint64{}
		}
		m[k] += v
	}
	return m
}
