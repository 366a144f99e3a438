package status

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// /metrics carries the Go and process collectors, the runtime's, the
// snapshot manager's and the steering layer's counters read at the
// scrape, a predicted_total sample per property labelled with its kind
// (label values escaped), and the steering histograms; the registry passes the
// Prometheus linter.
func TestMetricsWithEveryLayer(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	weird := "we\"ird\\na\nme"
	props := append(append([]node.Property(nil), spec.Properties...), node.Property{Name: weird, Kind: node.Safety})
	rt := &fakeRuntime{st: live.Status{ID: 3, Service: "randtree", Running: true, Counters: live.Counters{MessagesIn: 5, BytesOut: 1 << 40,
		DatagramsQueued: 9, DatagramsDropped: 2, SendsRefused: 11, SendQueueBytes: 4096}}}
	snaps := &fakeSnapshots{st: snapshot.LayerStatus{CN: 6, Stats: snapshot.Stats{Forced: 2, Gathers: 4}}}
	end := t0.Add(time.Minute)
	var stats steering.Stats
	stats.Rounds, stats.ImmediateChecks, stats.ReleasedForLiveness = 3, 8, 1
	stats.Predicted = map[string]uint64{randtree.ChildrenSiblingsDisjoint: 2, randtree.ParentChildAgree: 1}
	stats.RequestsSent, stats.RequestsRefusedAtAdmission, stats.RequestsRefusedAfterCheck = 4, 5, 2
	stats.DeadEnds, stats.DeadEndsConfirmed, stats.DeadEndsRetracted = 5, 2, 3
	stats.SafetyWalks, stats.SafetyWalkSteps, stats.SafetyWalkPredictions = 64, 6400, 2
	stats.Interventions = map[string]uint64{"round/" + randtree.ChildrenSiblingsDisjoint: 5, "restored/": 2}
	stats.Lifts, stats.LiftsExpired, stats.LiftedSeconds = 3, 1, 12.5
	stats.LiftsByProperty = map[string]steering.LiftCount{randtree.AllJoined: {Lifts: 2, LongestFailingSeconds: 31.5}, randtree.OneRoot: {Lifts: 1, Expired: 1}}
	steer := &fakeSteering{st: steering.LayerStatus{Mode: "steer", Immediate: true, Stats: stats, LastRound: &end,
		Lift: &steering.LiftRecord{Property: randtree.AllJoined, Since: end, FailingSince: t0, FailingSeconds: 31.5},
		Reasons: []steering.FilterReason{
			{Filter: "n3: drop a from n1", Why: steering.Explanation{Source: "round", Property: randtree.ChildrenSiblingsDisjoint, Kind: "safety"}},
			{Filter: "n3: drop b from n1", Why: steering.Explanation{Source: "round", Property: randtree.ChildrenSiblingsDisjoint, Kind: "safety"}},
			{Filter: "n3: drop c from n2", Why: steering.Explanation{Source: "restored"}},
		}}}
	tm := NewTimings()
	tm.ObserveRound(1500 * time.Millisecond)
	tm.ObserveRound(20 * time.Millisecond)
	tm.ObserveImmediateCheck(40 * time.Microsecond)
	s := newTestServer(t, Config{Runtime: rt, Snapshots: snaps, Steering: steer, Timings: tm, Properties: props, SnapshotDoc: noDoc})
	fams := scrape(t, s.Handler())
	want := []struct {
		name   string
		labels []string
		v      float64
	}{
		{"crystalball_node_info", []string{"id", "n3", "service", "randtree"}, 1},
		{"crystalball_node_running", nil, 1},
		{"crystalball_node_uptime_seconds", nil, 90},
		{"crystalball_node_messages_in_total", nil, 5},
		{"crystalball_node_bytes_out_total", nil, 1 << 40},
		{"crystalball_node_datagrams_queued_total", nil, 9},
		{"crystalball_node_datagrams_dropped_total", nil, 2},
		{"crystalball_node_sends_refused_total", nil, 11},
		{"crystalball_node_send_queue_bytes", nil, 4096},
		{"crystalball_snapshot_cn", nil, 6},
		{"crystalball_snapshot_checkpoints_total", []string{"reason", "forced"}, 2},
		{"crystalball_snapshot_checkpoints_total", []string{"reason", "periodic"}, 0},
		{"crystalball_snapshot_gathers_total", nil, 4},
		{"crystalball_steering_mode", []string{"immediate", "true", "mode", "steer"}, 1},
		{"crystalball_steering_rounds_total", nil, 3},
		{"crystalball_steering_immediate_checks_total", nil, 8},
		{"crystalball_steering_last_round_timestamp_seconds", nil, float64(end.Unix())},
		{"crystalball_steering_predicted_total", []string{"kind", "safety", "property", randtree.ChildrenSiblingsDisjoint}, 2},
		{"crystalball_steering_predicted_total", []string{"kind", "liveness", "property", randtree.ParentChildAgree}, 1},
		{"crystalball_steering_predicted_total", []string{"kind", "safety", "property", weird}, 0},
		{"crystalball_steering_requests_sent_total", nil, 4},
		{"crystalball_steering_requests_refused_total", nil, 7},
		{"crystalball_steering_released_for_liveness_total", nil, 1},
		{"crystalball_steering_dead_ends_total", nil, 5},
		{"crystalball_steering_dead_ends_confirmed_total", nil, 2},
		{"crystalball_steering_dead_ends_retracted_total", nil, 3},
		{"crystalball_steering_safety_walks_total", nil, 64},
		{"crystalball_steering_safety_walk_steps_total", nil, 6400},
		{"crystalball_steering_safety_walk_predictions_total", nil, 2},
		{"crystalball_steering_interventions_total", []string{"property", randtree.ChildrenSiblingsDisjoint, "source", "round"}, 5},
		{"crystalball_steering_interventions_total", []string{"property", "", "source", "restored"}, 2},
		{"crystalball_steering_filters_by_reason", []string{"kind", "safety", "property", randtree.ChildrenSiblingsDisjoint, "source", "round"}, 2},
		{"crystalball_steering_filters_by_reason", []string{"kind", "", "property", "", "source", "restored"}, 1},
		{"crystalball_steering_lifts_total", []string{"property", randtree.AllJoined}, 2},
		{"crystalball_steering_lifts_total", []string{"property", randtree.OneRoot}, 1},
		{"crystalball_steering_lifted", nil, 1},
		{"crystalball_steering_lift_failing_seconds", nil, 31.5},
		{"crystalball_steering_lifts_expired_total", nil, 1},
		{"crystalball_steering_lifted_seconds_total", nil, 12.5},
		{RoundDurationMetric, nil, 2},
		{ImmediateCheckMetric, nil, 1},
	}
	for _, w := range want {
		if v, ok := value(fams, w.name, w.labels...); !ok || v != w.v {
			t.Errorf("%s%v = %v (present %v), want %v", w.name, w.labels, v, ok, w.v)
		}
	}
	for _, p := range spec.Properties {
		if _, ok := value(fams, "crystalball_steering_predicted_total", "kind", p.Kind.String(), "property", p.Name); !ok {
			t.Errorf("no predicted_total sample for %s (%v)", p.Name, p.Kind)
		}
	}
	for _, name := range []string{"go_goroutines", "go_gc_duration_seconds", "process_cpu_seconds_total", "process_open_fds"} {
		if fams[name] == nil {
			t.Errorf("no %s", name)
		}
	}
	if h := fams[RoundDurationMetric].Metric[0].Histogram; h.GetSampleSum() != 1.52 || fams[RoundDurationMetric].GetType() != dto.MetricType_HISTOGRAM {
		t.Errorf("round histogram %v", h)
	}
	if _, ok := value(fams, "crystalball_snapshot_last_age_seconds"); ok {
		t.Error("last_age_seconds before the first snapshot")
	}
	problems, err := testutil.GatherAndLint(s.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "crystalball_") {
			t.Errorf("lint: %s: %s", p.Metric, p.Text)
		}
	}
}

// Without the layers only the runtime's families and the server's own
// (and Go's and the process's) are there; the counters follow the runtime
// between scrapes.
func TestMetricsWithoutLayers(t *testing.T) {
	rt := &fakeRuntime{st: live.Status{ID: 1, Service: "chord"}}
	s := newTestServer(t, Config{Runtime: rt})
	h := s.Handler()
	for name := range scrape(t, h) {
		if strings.HasPrefix(name, "crystalball_") && !strings.HasPrefix(name, "crystalball_node_") && !strings.HasPrefix(name, "crystalball_http_") {
			t.Errorf("unexpected family %s without layers", name)
		}
	}
	rt.st.Counters.ConnsDialed = 12
	if v, _ := value(scrape(t, h), "crystalball_node_conns_dialed_total"); v != 12 {
		t.Errorf("conns_dialed_total = %v after the runtime counted 12", v)
	}
}
