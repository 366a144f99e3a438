package status

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// scalar is a metric family of one unlabelled sample read from a status S.
type scalar[S any] struct {
	desc *prometheus.Desc
	typ  prometheus.ValueType
	get  func(S) float64
}

func counter[S any](name, help string, get func(S) float64) scalar[S] {
	return scalar[S]{prometheus.NewDesc(name, help, nil, nil), prometheus.CounterValue, get}
}

func gauge[S any](name, help string, get func(S) float64) scalar[S] {
	return scalar[S]{prometheus.NewDesc(name, help, nil, nil), prometheus.GaugeValue, get}
}

// statusCollector is a prometheus.Collector that reads a layer's status
// once per scrape and turns it into constant metrics: scalars, and the
// labelled or conditional families collect adds.
type statusCollector[S any] struct {
	read    func() S
	scalars []scalar[S]
	// descs are the descriptors of what collect sends.
	descs   []*prometheus.Desc
	collect func(S, chan<- prometheus.Metric)
}

func (c *statusCollector[S]) Describe(ch chan<- *prometheus.Desc) {
	for _, s := range c.scalars {
		ch <- s.desc
	}
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *statusCollector[S]) Collect(ch chan<- prometheus.Metric) {
	st := c.read()
	for _, s := range c.scalars {
		ch <- prometheus.MustNewConstMetric(s.desc, s.typ, s.get(st))
	}
	if c.collect != nil {
		c.collect(st, ch)
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// nodeReading is what the node collector reads per scrape.
type nodeReading struct {
	st     live.Status
	uptime float64
}

// newNodeCollector exposes the runtime's counters: crystalball_node_*.
func newNodeCollector(cfg Config) prometheus.Collector {
	type r = nodeReading
	cnt := func(get func(live.Counters) uint64) func(r) float64 {
		return func(x r) float64 { return float64(get(x.st.Counters)) }
	}
	info := prometheus.NewDesc("crystalball_node_info", "The node's ID and service (value 1).", []string{"id", "service"}, nil)
	return &statusCollector[r]{
		read: func() r {
			return r{st: cfg.Runtime.Status(), uptime: cfg.Now().Sub(cfg.Started).Seconds()}
		},
		scalars: []scalar[r]{
			gauge("crystalball_node_running", "1 while the runtime runs.", func(x r) float64 { return boolValue(x.st.Running) }),
			gauge("crystalball_node_uptime_seconds", "Time since the node started.", func(x r) float64 { return x.uptime }),
			counter("crystalball_node_messages_in_total", "Envelopes received and decoded from peers.", cnt(func(c live.Counters) uint64 { return c.MessagesIn })),
			counter("crystalball_node_messages_out_total", "Envelopes written to peers' connections.", cnt(func(c live.Counters) uint64 { return c.MessagesOut })),
			counter("crystalball_node_bytes_in_total", "Frame bytes received in envelopes.", cnt(func(c live.Counters) uint64 { return c.BytesIn })),
			counter("crystalball_node_bytes_out_total", "Frame bytes written to peers.", cnt(func(c live.Counters) uint64 { return c.BytesOut })),
			counter("crystalball_node_layer_messages_in_total", "Envelopes of the layers' own protocols received.", cnt(func(c live.Counters) uint64 { return c.LayerMessagesIn })),
			counter("crystalball_node_layer_messages_out_total", "Envelopes of the layers' own protocols queued for peers.", cnt(func(c live.Counters) uint64 { return c.LayerMessagesOut })),
			counter("crystalball_node_layer_bytes_in_total", "Frame bytes of the layers' own protocols received.", cnt(func(c live.Counters) uint64 { return c.LayerBytesIn })),
			counter("crystalball_node_layer_bytes_out_total", "Frame bytes of the layers' own protocols queued for peers.", cnt(func(c live.Counters) uint64 { return c.LayerBytesOut })),
			counter("crystalball_node_transport_errors_total", "Transport errors delivered to the service.", cnt(func(c live.Counters) uint64 { return c.TransportErrors })),
			counter("crystalball_node_frames_rejected_total", "Connections closed for what the peer sent.", cnt(func(c live.Counters) uint64 { return c.FramesRejected })),
			counter("crystalball_node_conns_dialed_total", "Outbound connections established.", cnt(func(c live.Counters) uint64 { return c.ConnsDialed })),
			counter("crystalball_node_conns_accepted_total", "Inbound connections established.", cnt(func(c live.Counters) uint64 { return c.ConnsAccepted })),
			counter("crystalball_node_dial_failures_total", "Outbound connections that failed to resolve, dial or handshake.", cnt(func(c live.Counters) uint64 { return c.DialFailures })),
			counter("crystalball_node_datagrams_queued_total", "The service's datagrams queued on peers' connections.", cnt(func(c live.Counters) uint64 { return c.DatagramsQueued })),
			counter("crystalball_node_datagrams_dropped_total", "The service's datagrams dropped before they were queued.", cnt(func(c live.Counters) uint64 { return c.DatagramsDropped })),
			counter("crystalball_node_sends_refused_total", "The service's TrySends refused because the peer's write queue was over its bound.", cnt(func(c live.Counters) uint64 { return c.SendsRefused })),
			gauge("crystalball_node_send_queue_bytes", "Frame bytes waiting in the outbound connections' write queues.", cnt(func(c live.Counters) uint64 { return c.SendQueueBytes })),
			counter("crystalball_node_durable_commits_total", "Store writes (each synced) of the node's durable records.", cnt(func(c live.Counters) uint64 { return c.DurableCommits })),
			counter("crystalball_node_durable_records_total", "Durable records written to the store.", cnt(func(c live.Counters) uint64 { return c.DurableRecords })),
			counter("crystalball_node_durable_bytes_total", "Bytes of durable records written to the store.", cnt(func(c live.Counters) uint64 { return c.DurableBytes })),
			counter("crystalball_node_durable_sync_seconds_total", "Time spent writing and syncing the store.", func(x r) float64 { return float64(x.st.Counters.DurableSyncNanos) / 1e9 }),
			counter("crystalball_node_hello_conflicts_total", "Hellos refused for claiming the ID of a live connection.", cnt(func(c live.Counters) uint64 { return c.HelloConflicts })),
		},
		descs: []*prometheus.Desc{info},
		collect: func(x r, ch chan<- prometheus.Metric) {
			ch <- prometheus.MustNewConstMetric(info, prometheus.GaugeValue, 1, x.st.ID.String(), x.st.Service)
		},
	}
}

// newSnapshotCollector exposes the snapshot manager's counters:
// crystalball_snapshot_*.
func newSnapshotCollector(cfg Config) prometheus.Collector {
	type s = snapshot.LayerStatus
	cnt := func(get func(snapshot.Stats) int64) func(s) float64 {
		return func(x s) float64 { return float64(max(get(x.Stats), 0)) }
	}
	checkpoints := prometheus.NewDesc("crystalball_snapshot_checkpoints_total", "Checkpoints taken, by reason.", []string{"reason"}, nil)
	lastAge := prometheus.NewDesc("crystalball_snapshot_last_age_seconds", "Age of the last gathered snapshot (absent before the first).", nil, nil)
	lastMembers := prometheus.NewDesc("crystalball_snapshot_last_members", "Members of the last gathered snapshot (absent before the first).", nil, nil)
	return &statusCollector[s]{
		read: func() s { return cfg.Snapshots.Status(cfg.Now()) },
		scalars: []scalar[s]{
			gauge("crystalball_snapshot_cn", "The node's checkpoint number.", func(x s) float64 { return float64(x.CN) }),
			gauge("crystalball_snapshot_checkpoints_stored", "Checkpoints stored.", func(x s) float64 { return float64(x.CheckpointsStored) }),
			gauge("crystalball_snapshot_stored_bytes", "Cost of the stored checkpoints against the quota, the in-flight log included.", func(x s) float64 { return float64(x.StoredBytes) }),
			counter("crystalball_snapshot_pruned_total", "Checkpoints dropped by the quota.", cnt(func(t snapshot.Stats) int64 { return t.Pruned })),
			counter("crystalball_snapshot_requests_total", "Checkpoint requests received.", cnt(func(t snapshot.Stats) int64 { return t.Requests })),
			counter("crystalball_snapshot_responses_total", "Checkpoint requests answered positively.", cnt(func(t snapshot.Stats) int64 { return t.Responses })),
			counter("crystalball_snapshot_negatives_total", "Checkpoint requests answered negatively.", cnt(func(t snapshot.Stats) int64 { return t.Negatives })),
			counter("crystalball_snapshot_negatives_bandwidth_total", "Negative answers for the bandwidth cap.", cnt(func(t snapshot.Stats) int64 { return t.NegativeBandwidth })),
			counter("crystalball_snapshot_response_bytes_total", "Approximate wire size of the responses sent.", cnt(func(t snapshot.Stats) int64 { return t.ResponseBytes })),
			counter("crystalball_snapshot_state_bytes_total", "Checkpoint payload bytes in the responses (compressed).", cnt(func(t snapshot.Stats) int64 { return t.StateBytes })),
			counter("crystalball_snapshot_raw_state_bytes_total", "Raw size of the checkpoints the responses carried.", cnt(func(t snapshot.Stats) int64 { return t.RawStateBytes })),
			counter("crystalball_snapshot_unchanged_total", "Responses without payload (identical to the acknowledged base).", cnt(func(t snapshot.Stats) int64 { return t.Unchanged })),
			counter("crystalball_snapshot_deltas_total", "Responses compressed against a base.", cnt(func(t snapshot.Stats) int64 { return t.Deltas })),
			counter("crystalball_snapshot_service_bytes_total", "Service traffic seen by the manager.", cnt(func(t snapshot.Stats) int64 { return t.ServiceBytes })),
			counter("crystalball_snapshot_gathers_total", "Neighbourhood snapshots gathered.", cnt(func(t snapshot.Stats) int64 { return t.Gathers })),
			counter("crystalball_snapshot_gathers_failed_total", "Gathers given up.", cnt(func(t snapshot.Stats) int64 { return t.GathersFailed })),
			counter("crystalball_snapshot_gather_rounds_total", "Gather rounds started.", cnt(func(t snapshot.Stats) int64 { return t.Rounds })),
			counter("crystalball_snapshot_bad_messages_total", "Malformed or out-of-bounds protocol messages.", cnt(func(t snapshot.Stats) int64 { return t.BadMessages })),
			counter("crystalball_snapshot_cn_rejected_total", "Checkpoint numbers from peers beyond the window, not adopted.", cnt(func(t snapshot.Stats) int64 { return t.CNRejected })),
			counter("crystalball_snapshot_cn_caught_up_total", "Jumps beyond the window two peers agreed on.", cnt(func(t snapshot.Stats) int64 { return t.CNCaughtUp })),
			gauge("crystalball_snapshot_cn_exhausted", "1 once the checkpoint number reached its bound.", func(x s) float64 { return boolValue(x.Stats.Exhausted) }),
			gauge("crystalball_snapshot_gathering", "1 while a gather is in progress.", func(x s) float64 { return boolValue(x.Gathering) }),
		},
		descs: []*prometheus.Desc{checkpoints, lastAge, lastMembers},
		collect: func(x s, ch chan<- prometheus.Metric) {
			for reason, n := range map[string]int64{"periodic": x.Stats.Periodic, "forced": x.Stats.Forced, "requested": x.Stats.Requested} {
				ch <- prometheus.MustNewConstMetric(checkpoints, prometheus.CounterValue, float64(max(n, 0)), reason)
			}
			if x.Last != nil {
				ch <- prometheus.MustNewConstMetric(lastAge, prometheus.GaugeValue, x.Last.AgeSeconds)
				ch <- prometheus.MustNewConstMetric(lastMembers, prometheus.GaugeValue, float64(len(x.Last.Members)))
			}
		},
	}
}

// newSteeringCollector exposes the steering layer's counters:
// crystalball_steering_*.
func newSteeringCollector(cfg Config) prometheus.Collector {
	type s = steering.LayerStatus
	u := func(get func(s) uint64) func(s) float64 { return func(x s) float64 { return float64(get(x)) } }
	mode := prometheus.NewDesc("crystalball_steering_mode", "The steering mode (value 1) and whether the immediate safety check is on.", []string{"mode", "immediate"}, nil)
	predicted := prometheus.NewDesc("crystalball_steering_predicted_total", "Violations predicted (safety) and dead ends predicted (liveness), by property and kind.", []string{"property", "kind"}, nil)
	interventions := prometheus.NewDesc("crystalball_steering_interventions_total", "Events kept from the handler, by the source of the prediction behind each (round, replay, request, check, restored) and its property.", []string{"source", "property"}, nil)
	inForce := prometheus.NewDesc("crystalball_steering_filters_by_reason", "Event filters in force, by the source of the prediction each came from and its property and kind.", []string{"source", "property", "kind"}, nil)
	lifts := prometheus.NewDesc("crystalball_steering_lifts_total", "Lifts of steering for liveness (the liveness budget): a property's obligation steering kept open past its bound lifted every filter and the immediate check until it closed; by the property, a lift for several counting for each.", []string{"property"}, nil)
	kinds := map[string]string{}
	for _, p := range cfg.Properties {
		kinds[p.Name] = p.Kind.String()
	}
	return &statusCollector[s]{
		read:    cfg.Steering.Status,
		scalars: steeringScalars(u),
		descs:   []*prometheus.Desc{mode, predicted, interventions, inForce, lifts},
		collect: func(x s, ch chan<- prometheus.Metric) {
			ch <- prometheus.MustNewConstMetric(mode, prometheus.GaugeValue, 1, x.Mode, strconv.FormatBool(x.Immediate))
			var names []string
			for name := range kinds {
				names = append(names, name)
			}
			for name := range x.Predicted {
				names = append(names, name)
			}
			slices.Sort(names)
			for _, name := range slices.Compact(names) {
				kind := kinds[name]
				if kind == "" {
					kind = node.Safety.String() // a property outside the spec's: the controller's own
				}
				ch <- prometheus.MustNewConstMetric(predicted, prometheus.CounterValue, float64(x.Predicted[name]), name, kind)
			}
			collectInterventions(x, interventions, inForce, ch)
			for _, name := range slices.Sorted(maps.Keys(x.LiftsByProperty)) {
				ch <- prometheus.MustNewConstMetric(lifts, prometheus.CounterValue, float64(x.LiftsByProperty[name].Lifts), name)
			}
		},
	}
}

func steeringScalars(u func(func(steering.LayerStatus) uint64) func(steering.LayerStatus) float64) []scalar[steering.LayerStatus] {
	type s = steering.LayerStatus
	return []scalar[s]{
		counter("crystalball_steering_rounds_total", "Steering rounds (explorations from a gathered snapshot).", u(func(x s) uint64 { return x.Rounds })),
		counter("crystalball_steering_rounds_reused_total", "Rounds whose snapshot held the last round's global state: its outcome was reused without exploring.", u(func(x s) uint64 { return x.RoundsReused })),
		counter("crystalball_steering_rounds_canceled_total", "Rounds cancelled by a newer snapshot or by the node's stop.", u(func(x s) uint64 { return x.RoundsCanceled })),
		counter("crystalball_steering_round_errors_total", "Rounds that failed.", u(func(x s) uint64 { return x.RoundErrors })),
		counter("crystalball_steering_snapshots_skipped_total", "Snapshots replaced by a newer one before a round took them.", u(func(x s) uint64 { return x.SnapshotsSkipped })),
		counter("crystalball_steering_states_explored_total", "Unique states explored by every search of every round.", u(func(x s) uint64 { return x.StatesExplored })),
		counter("crystalball_steering_replay_hits_total", "Error paths of earlier rounds that still failed when replayed.", u(func(x s) uint64 { return x.ReplayHits })),
		counter("crystalball_steering_walks_total", "Random walks the liveness search took from snapshots.", u(func(x s) uint64 { return x.Walks })),
		counter("crystalball_steering_walk_steps_total", "Steps of every walk, probe and filter check of the liveness search.", u(func(x s) uint64 { return x.WalkSteps })),
		counter("crystalball_steering_safety_walks_total", "Random walks the rounds took checking the safety properties (steering.Config.SafetyWalks).", u(func(x s) uint64 { return x.SafetyWalks })),
		counter("crystalball_steering_safety_walk_steps_total", "Steps of the rounds' safety walks.", u(func(x s) uint64 { return x.SafetyWalkSteps })),
		counter("crystalball_steering_safety_walk_predictions_total", "Safety violations the rounds' safety walks predicted that their consequence search had not.", u(func(x s) uint64 { return x.SafetyWalkPredictions })),
		counter("crystalball_steering_dead_ends_total", "Liveness dead ends predicted (critical transition found, verdict C1).", u(func(x s) uint64 { return x.DeadEnds })),
		counter("crystalball_steering_dead_ends_confirmed_total", "Dead ends whose property the node's later snapshots saw failing for the confirmation grace (steering.LivenessWatch).", u(func(x s) uint64 { return x.DeadEndsConfirmed })),
		counter("crystalball_steering_dead_ends_retracted_total", "Dead ends whose property the node's later snapshots saw holding once the confirmation grace had passed (false alarms, or dead ends avoided).", u(func(x s) uint64 { return x.DeadEndsRetracted })),
		counter("crystalball_steering_filters_installed_total", "Event filters installed.", u(func(x s) uint64 { return x.FiltersInstalled })),
		counter("crystalball_steering_filters_unhelpful_total", "Filters whose check still found a violation (not installed).", u(func(x s) uint64 { return x.FiltersUnhelpful })),
		gauge("crystalball_steering_filters", "Event filters in force.", func(x s) float64 { return float64(len(x.Filters)) }),
		counter("crystalball_steering_events_total", "Events offered to the steering gate (retries not counted).", u(func(x s) uint64 { return x.Events })),
		counter("crystalball_steering_filter_hits_total", "Events a filter kept from the handler.", u(func(x s) uint64 { return x.FilterHits })),
		counter("crystalball_steering_immediate_checks_total", "Events checked by the immediate safety check.", u(func(x s) uint64 { return x.ImmediateChecks })),
		counter("crystalball_steering_immediate_vetoes_total", "Events the immediate safety check kept from the handler.", u(func(x s) uint64 { return x.Vetoes })),
		counter("crystalball_steering_overrides_total", "Events let through because their kind used up its intervention budget.", u(func(x s) uint64 { return x.Overrides })),
		counter("crystalball_steering_escalations_total", "Event kinds escalated: their intervention budget ran out while a filter or the immediate check still stopped them.", u(func(x s) uint64 { return x.Escalations })),
		counter("crystalball_steering_held_total", "Events held from the handler while their kind was escalated.", u(func(x s) uint64 { return x.Held })),
		counter("crystalball_steering_released_total", "Escalations a re-check (a fresh round or the immediate check) ended.", u(func(x s) uint64 { return x.Released })),
		counter("crystalball_steering_released_for_liveness_total", "Escalations released early because the round's walks with the hold in place predicted a liveness dead end.", u(func(x s) uint64 { return x.ReleasedForLiveness })),
		counter("crystalball_steering_requests_sent_total", "Steering requests sent to the owners of predicted events.", u(func(x s) uint64 { return x.RequestsSent })),
		counter("crystalball_steering_answers_accepted_total", "Answers to this node's steering requests that installed the filter.", u(func(x s) uint64 { return x.AnswersAccepted })),
		counter("crystalball_steering_answers_refused_total", "Answers to this node's steering requests that refused it.", u(func(x s) uint64 { return x.AnswersRefused })),
		counter("crystalball_steering_requests_admitted_total", "Steering requests of other nodes admitted for a check.", u(func(x s) uint64 { return x.RequestsAdmitted })),
		counter("crystalball_steering_requests_refused_total", "Steering requests of other nodes refused (at admission or after the check).", u(func(x s) uint64 { return x.RequestsRefused() })),
		counter("crystalball_steering_requests_accepted_total", "Steering requests of other nodes whose filter this node installed.", u(func(x s) uint64 { return x.RequestsAccepted })),
		counter("crystalball_steering_exploration_seconds_total", "Wall time of every round, cancelled ones included.", func(x s) float64 { return x.ExplorationSeconds }),
		gauge("crystalball_steering_last_round_seconds", "Wall time of the last round.", func(x s) float64 { return x.LastRoundSeconds }),
		gauge("crystalball_steering_last_round_timestamp_seconds", "When the last round ended (Unix time; 0: none yet).", func(x s) float64 {
			if x.LastRound == nil {
				return 0
			}
			return float64(x.LastRound.UnixNano()) / 1e9
		}),
		gauge("crystalball_steering_round_running", "1 while a round is in progress.", func(x s) float64 { return boolValue(x.Running) }),
		gauge("crystalball_steering_lifted", "1 while steering is lifted for liveness (no filter, no immediate check).", func(x s) float64 { return boolValue(x.Lift != nil) }),
		gauge("crystalball_steering_lift_failing_seconds", "How long the property that lifted steering has failed, as of the layer's last evaluation (0: not lifted).", func(x s) float64 {
			if x.Lift == nil {
				return 0
			}
			return x.Lift.FailingSeconds
		}),
		counter("crystalball_steering_lifts_expired_total", "Lifts for liveness that ended with their property still failing: it fails without steering too.", u(func(x s) uint64 { return x.LiftsExpired })),
		counter("crystalball_steering_lifted_seconds_total", "Time steering was lifted for liveness.", func(x s) float64 { return x.LiftedSeconds }),
	}
}

// newHTTPCollector exposes the status server's own bounds:
// crystalball_http_*.
func newHTTPCollector(c *httpCounters) prometheus.Collector {
	type h = *httpCounters
	return &statusCollector[h]{
		read: func() h { return c },
		scalars: []scalar[h]{
			counter("crystalball_http_conns_refused_total", "Status connections closed on accept: MaxConns were open.", func(x h) float64 { return float64(x.connsRefused.Load()) }),
			counter("crystalball_http_bodies_refused_total", "Status requests refused for a body too large or too slow.", func(x h) float64 { return float64(x.bodiesRefused.Load()) }),
			counter("crystalball_http_conns_evicted_total", "Idle status connections closed to make room for a new one.", func(x h) float64 { return float64(x.connsEvicted.Load()) }),
			counter("crystalball_http_hosts_refused_total", "Status requests refused for their Host or Origin.", func(x h) float64 { return float64(x.hostsRefused.Load()) }),
			gauge("crystalball_http_conns_open", "Status connections open.", func(x h) float64 { return float64(x.open.Load()) }),
		},
	}
}

// newReportsCollector exposes the report writer's counters:
// crystalball_reports_*.
func newReportsCollector(r Reports) prometheus.Collector {
	type w = report.WriterStats
	return &statusCollector[w]{
		read: r.Stats,
		scalars: []scalar[w]{
			counter("crystalball_reports_written_total", "Prediction report files written.", func(x w) float64 { return float64(x.Written) }),
			counter("crystalball_reports_failed_total", "Prediction reports that could not be built or written.", func(x w) float64 { return float64(x.Failed) }),
			counter("crystalball_reports_dropped_total", "Report files removed, oldest first, to stay within the retention bounds.", func(x w) float64 { return float64(x.Dropped) }),
			gauge("crystalball_reports_files", "The node's report files kept.", func(x w) float64 { return float64(x.Files) }),
			gauge("crystalball_reports_bytes", "Bytes of the node's report files kept.", func(x w) float64 { return float64(x.Bytes) }),
		},
	}
}

// collectInterventions sends the steering layer's interventions by source
// and property, and its filters in force by the prediction each came from.
func collectInterventions(x steering.LayerStatus, interventions, inForce *prometheus.Desc, ch chan<- prometheus.Metric) {
	keys := slices.Sorted(maps.Keys(x.Interventions))
	for _, k := range keys {
		source, property, _ := strings.Cut(k, "/")
		ch <- prometheus.MustNewConstMetric(interventions, prometheus.CounterValue, float64(x.Interventions[k]), source, property)
	}
	type reason struct{ source, property, kind string }
	counts := map[reason]int{}
	for _, r := range x.Reasons {
		counts[reason{r.Why.Source, r.Why.Property, r.Why.Kind}]++
	}
	rs := slices.SortedFunc(maps.Keys(counts), func(a, b reason) int {
		return cmp.Or(strings.Compare(a.source, b.source), strings.Compare(a.property, b.property), strings.Compare(a.kind, b.kind))
	})
	for _, r := range rs {
		ch <- prometheus.MustNewConstMetric(inForce, prometheus.GaugeValue, float64(counts[r]), r.source, r.property, r.kind)
	}
}
