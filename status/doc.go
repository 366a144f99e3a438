// Package status is a live node's HTTP status server: the endpoints
// 'crystalball node --http' serves.
//
//	GET  /status    the node's state, counters and layers as JSON (StatusDoc)
//	GET  /metrics   Prometheus metrics (text exposition, or what the scraper negotiates)
//	GET  /snapshot  the last neighbourhood snapshot gathered (Config.SnapshotDoc renders it)
//	POST /snapshot  starts a neighbourhood snapshot (GatherStarted)
//	GET  /ui        a page for a browser that polls /status every 2 s (webview.Live)
//
// Every JSON body the server writes carries a "format" field naming its
// document type and version (StatusFormat, GatherFormat, ErrorFormat); the
// snapshot document is the caller's and carries its own.
//
// Metrics are served from a prometheus.Registry of the server's own (never
// the global one): the Go runtime and process collectors (go_*, process_*),
// the runtime's counters (crystalball_node_*), the snapshot manager's
// (crystalball_snapshot_*) and the steering layer's (crystalball_steering_*),
// read from their Status methods at every scrape, and two histograms fed
// through Timings: crystalball_steering_round_duration_seconds and
// crystalball_steering_immediate_check_seconds; the server's own bounds
// (crystalball_http_*: connections refused over MaxConns, bodies refused,
// connections open) and, with Config.Reports, the report writer's files
// (crystalball_reports_*).
//
// The server bounds its clients (limits.go): request headers within
// ReadHeaderTimeout and the whole request within ReadTimeout, bodies of at
// most MaxBodyBytes, responses within WriteTimeout, at most MaxConns
// connections open at once.
package status
