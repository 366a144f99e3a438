package status

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Timings holds the histograms of the steering layer's wall-clock costs:
// the duration of every steering round and the cost of every immediate
// safety check. Create it with NewTimings before the steering layer, hand
// ObserveRound and ObserveImmediateCheck to steering.LayerConfig's
// OnRoundTime and OnImmediateCheck, and pass it to the server in
// Config.Timings. Its methods are safe for concurrent use.
type Timings struct {
	round, check prometheus.Histogram
}

// The histograms' names.
const (
	RoundDurationMetric  = "crystalball_steering_round_duration_seconds"
	ImmediateCheckMetric = "crystalball_steering_immediate_check_seconds"
)

// NewTimings returns empty histograms. The round buckets run from 1 ms to
// about 33 s (a round runs several searches of steering.Config.MaxTime
// each); the immediate-check buckets from 1 µs to about 4 s.
func NewTimings() *Timings {
	return &Timings{
		round: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    RoundDurationMetric,
			Help:    "Wall time of the steering rounds, cancelled and failed ones included.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
		check: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    ImmediateCheckMetric,
			Help:    "Wall time of the steering gate on the events the immediate safety check examined (the filters in force included).",
			Buckets: prometheus.ExponentialBuckets(1e-6, 4, 12),
		}),
	}
}

// ObserveRound records the wall time of one steering round.
func (t *Timings) ObserveRound(d time.Duration) { t.round.Observe(d.Seconds()) }

// ObserveImmediateCheck records the wall time of one immediate safety
// check.
func (t *Timings) ObserveImmediateCheck(d time.Duration) { t.check.Observe(d.Seconds()) }

// collectors returns the histograms for a registry.
func (t *Timings) collectors() []prometheus.Collector {
	return []prometheus.Collector{t.round, t.check}
}
