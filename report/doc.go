// Package report holds crystalball's document formats, as Go types with a
// versioned "format" field, so that every program that embeds the runtime
// writes and reads them the same way:
//
//   - Snapshot (SnapshotFormat, "crystalball-snapshot/1"): a gathered
//     neighbourhood snapshot as JSON — checkpoints as bytes and decoded,
//     recorded channels, properties evaluated on it. A live node serves it
//     at GET /snapshot (package status); Restore turns it back into a
//     snapshot.Snapshot.
//   - Prediction (PredictionFormat, "crystalball-prediction/1"): one
//     predicted violation with its path and the snapshot it was predicted
//     from, which Model rebuilds into the explorer's model so the path
//     replays ('crystalball trace show'). Writer writes one per prediction
//     of a steering round (steering.LayerConfig.OnRound).
//
// A reader checks the format field before it trusts the rest: a document
// of another format (or a later version) is an error wrapping ErrFormat.
// Documents come from files and peers, so ReadPrediction and ReadSnapshot
// (on ReadDocument) trust no size in them: they read at most Limits.Bytes,
// count JSON values before decoding, bound node counts, path lengths, fault
// budgets and names (MaxNodes, MaxPathSteps, MaxFaults, MaxNameBytes) and
// quote at most QuoteBytes of bad input in an error (ErrTooLarge,
// ErrMalformed).
// The package is deterministic: no goroutines, no clock (times are given),
// no network; only Prediction.WriteFile and Writer touch the file system.
package report

import "errors"

// ErrFormat is wrapped by the errors of a reader given a document of
// another format, or of a version it does not know.
var ErrFormat = errors.New("report: unknown document format")
