// Package webview is crystalball's web view of what the explorer saw: an
// HTTP handler that shows a set of documents — replayable traces (a check
// --json output or a prediction report), emulated runs' predictions and
// experiments' --json results — and a live node's status page (Live).
//
// The package draws and serves; it does not replay. A document's trace is
// a Trace (the caller's replay of a report: package cli adapts its Mdb
// timeline), so there is one replay in the project and this package only
// renders its steps, node states, critical step, nearest live path and
// event graph. Pages are Go html/template with a little vanilla
// JavaScript (embedded, no framework); the event graph and the figures
// are SVG drawn on the server, the figures from the same JSON the --json
// outputs carry (Figures).
//
// Concurrency: a Handler serves concurrent requests; it calls a Trace's
// methods from those requests, so a Trace must be safe for concurrent
// use. The handler starts no goroutine and keeps no state besides the
// documents it was given. Nothing here reads the network or the clock:
// the live page's JavaScript polls the status endpoint of the server that
// mounts it (package status).
package webview
