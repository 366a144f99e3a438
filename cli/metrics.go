package cli

import (
	"bufio"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// metricsContentType is the Prometheus text exposition format, version
// 0.0.4, which GET /metrics serves.
const metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

// metricsInput is what GET /metrics exposes: the runtime's status, the
// snapshot and steering layers (either may be nil) and the service's
// properties (every safety property gets a predicted_total sample, 0 until
// one is predicted).
type metricsInput struct {
	status     live.Status
	uptime     time.Duration
	live       *snapshot.Live
	steer      *steering.Layer
	properties []node.Property
	now        time.Time
}

// promWriter writes the Prometheus text exposition format by hand (the
// module does not depend on client_golang for a few dozen numbers): a
// family is a # HELP and a # TYPE line followed by its samples.
type promWriter struct{ w *bufio.Writer }

// family starts a metric family; typ is counter or gauge.
func (p promWriter) family(name, typ, help string) {
	p.w.WriteString("# HELP " + name + " " + escapeHelp(help) + "\n")
	p.w.WriteString("# TYPE " + name + " " + typ + "\n")
}

// sample writes one sample; labels alternate names and values.
func (p promWriter) sample(name string, v float64, labels ...string) {
	p.w.WriteString(name)
	if len(labels) > 0 {
		p.w.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				p.w.WriteByte(',')
			}
			p.w.WriteString(labels[i] + `="` + escapeLabel(labels[i+1]) + `"`)
		}
		p.w.WriteByte('}')
	}
	p.w.WriteByte(' ')
	p.w.WriteString(formatValue(v))
	p.w.WriteByte('\n')
}

// counter writes a family of one unlabelled counter sample.
func (p promWriter) counter(name, help string, v uint64) {
	p.family(name, "counter", help)
	p.sample(name, float64(v))
}

// gauge writes a family of one unlabelled gauge sample.
func (p promWriter) gauge(name, help string, v float64) {
	p.family(name, "gauge", help)
	p.sample(name, v)
}

func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(s) }

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// writeMetrics writes the node's counters in the Prometheus text format:
// crystalball_node_* (the runtime), crystalball_snapshot_* (the snapshot
// manager, with --snapshots) and crystalball_steering_* (the steering
// layer, with --mode debug|steer or --immediate). README.md ("Live
// nodes") lists them.
func writeMetrics(out io.Writer, in metricsInput) error {
	p := promWriter{bufio.NewWriter(out)}
	c := in.status.Counters
	p.family("crystalball_node_info", "gauge", "The node's ID and service (value 1).")
	p.sample("crystalball_node_info", 1, "id", in.status.ID.String(), "service", in.status.Service)
	p.gauge("crystalball_node_running", "1 while the runtime runs.", boolGauge(in.status.Running))
	p.gauge("crystalball_node_uptime_seconds", "Time since the node started.", in.uptime.Seconds())
	p.counter("crystalball_node_messages_in_total", "Envelopes received and decoded from peers.", c.MessagesIn)
	p.counter("crystalball_node_messages_out_total", "Envelopes written to peers' connections.", c.MessagesOut)
	p.counter("crystalball_node_bytes_in_total", "Frame bytes received in envelopes.", c.BytesIn)
	p.counter("crystalball_node_bytes_out_total", "Frame bytes written to peers.", c.BytesOut)
	p.counter("crystalball_node_layer_messages_in_total", "Envelopes of the layers' own protocols received.", c.LayerMessagesIn)
	p.counter("crystalball_node_layer_messages_out_total", "Envelopes of the layers' own protocols queued for peers.", c.LayerMessagesOut)
	p.counter("crystalball_node_layer_bytes_in_total", "Frame bytes of the layers' own protocols received.", c.LayerBytesIn)
	p.counter("crystalball_node_layer_bytes_out_total", "Frame bytes of the layers' own protocols queued for peers.", c.LayerBytesOut)
	p.counter("crystalball_node_transport_errors_total", "Transport errors delivered to the service.", c.TransportErrors)
	p.counter("crystalball_node_frames_rejected_total", "Connections closed for what the peer sent.", c.FramesRejected)
	p.counter("crystalball_node_conns_dialed_total", "Outbound connections established.", c.ConnsDialed)
	p.counter("crystalball_node_conns_accepted_total", "Inbound connections established.", c.ConnsAccepted)
	p.counter("crystalball_node_dial_failures_total", "Outbound connections that failed to resolve, dial or handshake.", c.DialFailures)

	if in.live != nil {
		writeSnapshotMetrics(p, in.live.Status(in.now))
	}
	if in.steer != nil {
		writeSteeringMetrics(p, in.steer.Status(), in.properties)
	}
	return p.w.Flush()
}

func writeSnapshotMetrics(p promWriter, st snapshot.LiveStatus) {
	s := st.Stats
	u := func(v int64) uint64 { return uint64(max(v, 0)) }
	p.gauge("crystalball_snapshot_cn", "The node's checkpoint number.", float64(st.CN))
	p.family("crystalball_snapshot_checkpoints_total", "counter", "Checkpoints taken, by reason.")
	p.sample("crystalball_snapshot_checkpoints_total", float64(s.Periodic), "reason", "periodic")
	p.sample("crystalball_snapshot_checkpoints_total", float64(s.Forced), "reason", "forced")
	p.sample("crystalball_snapshot_checkpoints_total", float64(s.Requested), "reason", "requested")
	p.gauge("crystalball_snapshot_checkpoints_stored", "Checkpoints stored.", float64(st.CheckpointsStored))
	p.gauge("crystalball_snapshot_stored_bytes", "Cost of the stored checkpoints against the quota, the in-flight log included.", float64(st.StoredBytes))
	p.counter("crystalball_snapshot_pruned_total", "Checkpoints dropped by the quota.", u(s.Pruned))
	p.counter("crystalball_snapshot_requests_total", "Checkpoint requests received.", u(s.Requests))
	p.counter("crystalball_snapshot_responses_total", "Checkpoint requests answered positively.", u(s.Responses))
	p.counter("crystalball_snapshot_negatives_total", "Checkpoint requests answered negatively.", u(s.Negatives))
	p.counter("crystalball_snapshot_negatives_bandwidth_total", "Negative answers for the bandwidth cap.", u(s.NegativeBandwidth))
	p.counter("crystalball_snapshot_response_bytes_total", "Approximate wire size of the responses sent.", u(s.ResponseBytes))
	p.counter("crystalball_snapshot_state_bytes_total", "Checkpoint payload bytes in the responses (compressed).", u(s.StateBytes))
	p.counter("crystalball_snapshot_raw_state_bytes_total", "Raw size of the checkpoints the responses carried.", u(s.RawStateBytes))
	p.counter("crystalball_snapshot_unchanged_total", "Responses without payload (identical to the acknowledged base).", u(s.Unchanged))
	p.counter("crystalball_snapshot_deltas_total", "Responses compressed against a base.", u(s.Deltas))
	p.counter("crystalball_snapshot_service_bytes_total", "Service traffic seen by the manager.", u(s.ServiceBytes))
	p.counter("crystalball_snapshot_gathers_total", "Neighbourhood snapshots gathered.", u(s.Gathers))
	p.counter("crystalball_snapshot_gathers_failed_total", "Gathers given up.", u(s.GathersFailed))
	p.counter("crystalball_snapshot_gather_rounds_total", "Gather rounds started.", u(s.Rounds))
	p.counter("crystalball_snapshot_bad_messages_total", "Malformed or out-of-bounds protocol messages.", u(s.BadMessages))
	p.gauge("crystalball_snapshot_gathering", "1 while a gather is in progress.", boolGauge(st.Gathering))
	if st.Last != nil {
		p.gauge("crystalball_snapshot_last_age_seconds", "Age of the last gathered snapshot.", st.Last.AgeSeconds)
		p.gauge("crystalball_snapshot_last_members", "Members of the last gathered snapshot.", float64(len(st.Last.Members)))
	}
}

func writeSteeringMetrics(p promWriter, st steering.LayerStatus, props []node.Property) {
	p.family("crystalball_steering_mode", "gauge", "The steering mode (value 1) and whether the immediate safety check is on.")
	p.sample("crystalball_steering_mode", 1, "mode", st.Mode, "immediate", strconv.FormatBool(st.Immediate))
	p.counter("crystalball_steering_rounds_total", "Steering rounds (explorations from a gathered snapshot).", st.Rounds)
	p.counter("crystalball_steering_rounds_reused_total", "Rounds whose snapshot held the last round's global state: its outcome was reused without exploring.", st.RoundsReused)
	p.counter("crystalball_steering_rounds_canceled_total", "Rounds cancelled by a newer snapshot or by the node's stop.", st.RoundsCanceled)
	p.counter("crystalball_steering_round_errors_total", "Rounds that failed.", st.RoundErrors)
	p.counter("crystalball_steering_snapshots_skipped_total", "Snapshots replaced by a newer one before a round took them.", st.SnapshotsSkipped)
	p.counter("crystalball_steering_states_explored_total", "Unique states explored by every search of every round.", st.StatesExplored)
	p.family("crystalball_steering_predicted_total", "counter", "Violations predicted, by property.")
	names := make([]string, 0, len(st.Predicted)+len(props))
	for _, pr := range props {
		if pr.Kind == node.Safety {
			names = append(names, pr.Name)
		}
	}
	for name := range st.Predicted {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		p.sample("crystalball_steering_predicted_total", float64(st.Predicted[name]), "property", name)
	}
	p.counter("crystalball_steering_replay_hits_total", "Error paths of earlier rounds that still failed when replayed.", st.ReplayHits)
	p.counter("crystalball_steering_filters_installed_total", "Event filters installed.", st.FiltersInstalled)
	p.counter("crystalball_steering_filters_unhelpful_total", "Filters whose check still found a violation (not installed).", st.FiltersUnhelpful)
	p.gauge("crystalball_steering_filters", "Event filters in force.", float64(len(st.Filters)))
	p.counter("crystalball_steering_events_total", "Events offered to the steering gate (retries not counted).", st.Events)
	p.counter("crystalball_steering_filter_hits_total", "Events a filter kept from the handler.", st.FilterHits)
	p.counter("crystalball_steering_immediate_checks_total", "Events checked by the immediate safety check.", st.ImmediateChecks)
	p.counter("crystalball_steering_immediate_vetoes_total", "Events the immediate safety check kept from the handler.", st.Vetoes)
	p.counter("crystalball_steering_overrides_total", "Events let through because their kind used up its intervention budget.", st.Overrides)
	p.family("crystalball_steering_exploration_seconds_total", "counter", "Wall time of every round, cancelled ones included.")
	p.sample("crystalball_steering_exploration_seconds_total", st.ExplorationSeconds)
	p.gauge("crystalball_steering_last_round_seconds", "Wall time of the last round.", st.LastRoundSeconds)
	last := 0.0
	if st.LastRound != nil {
		last = float64(st.LastRound.UnixNano()) / 1e9
	}
	p.gauge("crystalball_steering_last_round_timestamp_seconds", "When the last round ended (Unix time; 0: none yet).", last)
	p.gauge("crystalball_steering_round_running", "1 while a round is in progress.", boolGauge(st.Running))
}
