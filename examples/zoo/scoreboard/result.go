package scoreboard

import (
	"slices"
	"time"
)

// Format names the JSON form of a Result; readers check it first.
const Format = "crystalball-zoo-scoreboard/1"

// Result is the scoreboard: every case's runs and summary, and the total
// over the cases. Durations are integers in nanoseconds in JSON.
type Result struct {
	// Format is Format.
	Format  string        `json:"format"`
	Seeds   []uint64      `json:"seeds"`
	Warmup  time.Duration `json:"warmup_ns"`
	Horizon time.Duration `json:"horizon_ns"`
	Cases   []CaseResult  `json:"cases"`
	// Total sums the cases' summaries.
	Total Summary `json:"total"`
}

// CaseResult is one case's runs, seed by seed, and their summary.
type CaseResult struct {
	Name     string        `json:"name"`
	Bug      string        `json:"bug"`
	Fix      string        `json:"fix"`
	Covers   []string      `json:"covers"`
	Property string        `json:"property"`
	Nodes    int           `json:"nodes"`
	Duration time.Duration `json:"duration_ns"`
	// Churn and Breaks are the fault rates, per minute.
	Churn   float64      `json:"churn_per_minute"`
	Breaks  float64      `json:"breaks_per_minute"`
	Seeds   []SeedResult `json:"seeds"`
	Summary Summary      `json:"summary"`
}

// SeedResult holds the six runs of one case and seed.
type SeedResult struct {
	Seed uint64 `json:"seed"`
	// Bug are the runs with the planted bug, Twin those of the fixed twin.
	Bug  Variant `json:"bug"`
	Twin Variant `json:"twin"`
}

// Variant holds the three runs of one variant of a case with one seed.
type Variant struct {
	Off   RunResult `json:"off"`
	Debug RunResult `json:"debug"`
	Steer RunResult `json:"steer"`
}

// RunResult is what one emulated run did.
type RunResult struct {
	// Violations is the number of states violating the case's Property,
	// in Episodes stretches; FirstViolation the virtual time of the
	// first (meaningful when Violations > 0).
	Violations     int64         `json:"violations"`
	Episodes       int64         `json:"episodes"`
	FirstViolation time.Duration `json:"first_violation_ns,omitempty"`
	// OtherViolations counts the states violating the spec's other
	// safety properties.
	OtherViolations int64 `json:"other_violations,omitempty"`
	// Predicted is set when a steering round predicted the Property;
	// FirstPrediction is the virtual time the first such round started,
	// PredictingRounds how many rounds did.
	Predicted        bool          `json:"predicted"`
	FirstPrediction  time.Duration `json:"first_prediction_ns,omitempty"`
	PredictingRounds int           `json:"predicting_rounds,omitempty"`
	// OtherPredictions counts the rounds' predictions of other properties
	// (safety or liveness).
	OtherPredictions uint64 `json:"other_predictions,omitempty"`
	// FirstViolations maps every safety property the run violated (the
	// case's and the others) to the virtual time of its first violation;
	// LivenessFailed lists the liveness properties that did not hold on
	// the final state (meaningful after a heal phase: Config.Heal);
	// FirstPredictions maps every property a round predicted to the
	// start of the first such round.
	FirstViolations  map[string]time.Duration `json:"first_violations_ns,omitempty"`
	LivenessFailed   []string                 `json:"liveness_failed,omitempty"`
	FirstPredictions map[string]time.Duration `json:"first_predictions_ns,omitempty"`
	// FirstDeadAtStart maps every liveness property a round found dead at
	// its snapshot (no walk from it satisfies the property:
	// steering.LivenessOutcome.DeadAtStart, not a prediction) to the start
	// of the first such round.
	FirstDeadAtStart map[string]time.Duration `json:"first_dead_at_start_ns,omitempty"`
	// Panic is a handler's panic that ended the run (Config.KeepPanics),
	// and EventBudgetSpent is set when Config.MaxEvents ended it.
	Panic string `json:"panic,omitempty"`
	// FirstRound is the start of the first steering round that reported
	// (zero: none did; an off run has none). FirstOutages maps every
	// liveness property that failed at some time of the run to the start
	// of its first outage (emulation.TimedResult).
	FirstRound       time.Duration            `json:"first_round_ns,omitempty"`
	FirstOutages     map[string]time.Duration `json:"first_outages_ns,omitempty"`
	EventBudgetSpent bool                     `json:"event_budget_spent,omitempty"`
	// Steering's work (zero in off runs).
	Rounds           uint64 `json:"rounds,omitempty"`
	FiltersInstalled uint64 `json:"filters_installed,omitempty"`
	FilterHits       uint64 `json:"filter_hits,omitempty"`
	Vetoes           uint64 `json:"vetoes,omitempty"`
	Overrides        uint64 `json:"overrides,omitempty"`
	// Starved lists the liveness properties that do not hold at the run's
	// end (steering must not buy safety with progress).
	Starved []string `json:"starved,omitempty"`
	// The run's events and faults.
	Events int64 `json:"events"`
	Leaves int64 `json:"leaves"`
	Breaks int64 `json:"breaks"`
}

// violated reports whether the run violated any safety property.
func (r RunResult) violated() bool { return r.Violations > 0 || r.OtherViolations > 0 }

// Summary scores one case (or, as Result.Total, every case) over its
// seeds; see the package documentation for each figure.
type Summary struct {
	// Runs is the number of seeds: the runs behind each share.
	Runs int `json:"runs"`
	// Predicted and PredictedInTime count the planted bug's debug runs
	// that predicted the Property, at all and within the Horizon.
	Predicted       int `json:"predicted"`
	PredictedInTime int `json:"predicted_in_time"`
	// OccurredOff and OccurredSteer count the planted bug's runs that
	// violated the Property off and with steering; the States fields sum
	// their violating states.
	OccurredOff         int   `json:"occurred_off"`
	OccurredSteer       int   `json:"occurred_steer"`
	ViolatedStatesOff   int64 `json:"violated_states_off"`
	ViolatedStatesSteer int64 `json:"violated_states_steer"`
	// Prevented counts the seeds whose off run violated the Property and
	// whose steer run did not.
	Prevented int `json:"prevented"`
	// FalsePositives counts the twin's debug runs with any prediction.
	FalsePositives int `json:"false_positives"`
	// TwinViolations counts the twin's runs (every configuration) that
	// violated a safety property.
	TwinViolations int `json:"twin_violations"`
	// LivenessLost counts the steer runs (bug and twin) that end with a
	// liveness property failing which holds at the end of the same
	// variant's off run: progress steering cost.
	LivenessLost int `json:"liveness_lost"`
}

// PreventedShare is Prevented / OccurredOff, and 1 when nothing occurred
// off (nothing to prevent).
func (s Summary) PreventedShare() float64 {
	if s.OccurredOff == 0 {
		return 1
	}
	return float64(s.Prevented) / float64(s.OccurredOff)
}

// add scores one seed's runs into s, with horizon the in-time bound.
func (s *Summary) add(r SeedResult, horizon time.Duration) {
	s.Runs++
	if d := r.Bug.Debug; d.Predicted {
		s.Predicted++
		if d.FirstPrediction <= horizon {
			s.PredictedInTime++
		}
	}
	off, steer := r.Bug.Off, r.Bug.Steer
	s.ViolatedStatesOff += off.Violations
	s.ViolatedStatesSteer += steer.Violations
	if off.Violations > 0 {
		s.OccurredOff++
		if steer.Violations == 0 {
			s.Prevented++
		}
	}
	if steer.Violations > 0 {
		s.OccurredSteer++
	}
	if d := r.Twin.Debug; d.Predicted || d.OtherPredictions > 0 {
		s.FalsePositives++
	}
	for _, t := range []RunResult{r.Twin.Off, r.Twin.Debug, r.Twin.Steer} {
		if t.violated() {
			s.TwinViolations++
		}
	}
	for _, v := range []Variant{r.Bug, r.Twin} {
		if v.livenessLost() {
			s.LivenessLost++
		}
	}
}

// livenessLost reports whether the steer run ends with a liveness
// property failing that holds at the end of the off run.
func (v Variant) livenessLost() bool {
	for _, p := range v.Steer.Starved {
		if !slices.Contains(v.Off.Starved, p) {
			return true
		}
	}
	return false
}

// plus returns the sum of s and o.
func (s Summary) plus(o Summary) Summary {
	return Summary{
		Runs:                s.Runs + o.Runs,
		Predicted:           s.Predicted + o.Predicted,
		PredictedInTime:     s.PredictedInTime + o.PredictedInTime,
		OccurredOff:         s.OccurredOff + o.OccurredOff,
		OccurredSteer:       s.OccurredSteer + o.OccurredSteer,
		ViolatedStatesOff:   s.ViolatedStatesOff + o.ViolatedStatesOff,
		ViolatedStatesSteer: s.ViolatedStatesSteer + o.ViolatedStatesSteer,
		Prevented:           s.Prevented + o.Prevented,
		FalsePositives:      s.FalsePositives + o.FalsePositives,
		TwinViolations:      s.TwinViolations + o.TwinViolations,
		LivenessLost:        s.LivenessLost + o.LivenessLost,
	}
}
