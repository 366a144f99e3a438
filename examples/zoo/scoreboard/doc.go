// Package scoreboard runs deep online debugging and execution steering on
// the bug zoo (package zoo) and scores them: for every case and seed it
// runs the emulator on the case with its planted bug and on its fixed
// twin, in three configurations each, and counts what was predicted,
// what happened and what steering prevented. It is a regression suite
// for the predictor, not a benchmark to tune constants to.
//
// # The runs
//
// Every run is an emulation.Config of the case: its Spec (planted bug or
// fixed twin), Nodes, Workload and Duration, its Churn and Breaks rates as
// emulation.ChurnConfig and emulation.BreakConfig starting after a short
// warm-up (Config.Warmup, so the nodes start before faults do), and the
// seed. The same case, variant and seed give the same network, start
// times and fault schedule in all three configurations, until steering
// or the snapshot protocol's own messages change what the nodes do:
//
//   - off: no snapshots, no steering. The safety observer counts the
//     states violating the case's Property and the time of the first.
//   - debug: deep online debugging, as `crystalball emulate --mode debug`
//     runs it (emulation.ModeConfig: a few predicting nodes with
//     neighbourhood snapshots and deep rounds, nothing installed). The run
//     records whether a round predicted the case's Property, and when the
//     first such round started (virtual time since the start of the run).
//   - steer: every node steering plus the immediate safety check, as
//     `emulate --mode steer --immediate` runs it; violations are counted
//     as in off.
//
// # The figures
//
// Per case, over the seeds (the runs of the planted bug unless said):
//
//   - predicted: debug runs in which the Property was predicted at all;
//   - predicted within Horizon (60 s by default, the zoo's target):
//     debug runs whose first such prediction came at or before Horizon of
//     virtual time;
//   - occurred (off) and occurred (steer): runs in which the Property was
//     violated, with the violating states summed;
//   - prevented: of the seeds whose off run violated the Property, the
//     share whose steer run did not (the target is at least 95%);
//   - false positives: debug runs of the fixed twin in which any property
//     was predicted (the twin has no bug, so every prediction is false —
//     provided the twin is safe under every fault the rounds explore, a
//     silent reset and a connection break along any path, and not only
//     under the case's own fault rates);
//   - twin violations: runs of the fixed twin, in any configuration, that
//     violated a safety property — a bug in the case, not in the
//     predictor;
//   - liveness lost: steer runs (bug and twin) ending with a liveness
//     property failing that holds at the end of the same variant's off
//     run — progress steering cost, which a prevention must not (each
//     run's failing properties are in RunResult.Starved).
//
// A Result is data: JSON with a format field (Format) and a text table
// (Result.String). The runs are deterministic, so a Result is a function
// of the cases, the seeds and the code; wall times are left out of it.
package scoreboard
