// Command realbugs scores crystalball on real historical bugs of a
// library nobody here wrote: go.etcd.io/raft, run through the store of
// examples/etcdraft as etcd's server configures it.
//
//	go run ./bench/realbugs [--bugs a,b] [--seeds 1-10] [--online 1] [--json board.json]
//	go run ./bench/realbugs --list
//
// # The corpus
//
// Each bug (Corpus) is a fix from the library's history (etcd-io/raft, or
// etcd's raft/ before the split) put back: patches/NAME.patch is a
// reverse patch against the module version go.mod requires, written
// from the fix. A run copies the module out of the module cache into a
// scratch directory (nothing vendored is committed), applies the patch
// with patch(1), and confirms it with the library's own regression test
// (`go test -run TEST` in the copy fails with the patch and passes
// without); a patch the test does not confirm stops the run
// (ErrNotConfirmed). examples/etcdraft is then built against the copy
// through a modfile with a replace directive; the repository's go.mod is
// not touched.
//
// # What a bug is scored on
//
// Every build runs, with the store's corrections on (--fix all) and the
// configuration the bug names (etcdkv-busy, or etcdkv-small for bugs of
// snapshots and flow control):
//
//   - check: a BFS to --check-depth, then --walks random walks of
//     --walk-depth steps checking the safety and history properties at
//     every step — fault-free, with a crash that lasts and messages
//     duplicated and overtaken, with a message lost, and with a restart
//     and a message later than the declared delay, each fault weighed as
//     the steering rounds' walks weigh it — stopping at
//     the first violation (strategy, depth, states or walk steps,
//     seconds), which check --confirm then judges by a directed run (the
//     emulator forced along its path: real, model-only or wrong);
//   - emulate: one run per seed of --duration under --faults (churn,
//     crashes, message loss, duplication and reordering); an alarm is a
//     safety property violated, a bounded property's outage, a history
//     that is not linearizable, a liveness property failing at the end,
//     or a panic;
//   - online: the first --online violating seeds run again with deep
//     online debugging (--mode debug: the lead is how long before the
//     first alarm a matching prediction came) and with steering and the
//     immediate safety check (--mode steer --immediate: prevented when
//     the run raises no alarm of any kind, so liveness is kept);
//   - watch: a build no seed bit (and the control) runs the first seed
//     for --online-duration with deep online debugging and emulate
//     --confirm, every prediction judged by a directed run.
//
// The unmodified library is the control: the same runs, once per
// configuration the bugs use; every alarm its check or off runs raise
// counts in control_alarms, every watch run with a prediction that is
// not real in original_false_alarms.
//
// # Columns
//
// The board reads as the mutation corpus's (bench/mutants) does. A bug is
// killed when a seed's off run raised an alarm; it bit at start when the
// alarm came before its debug run's first steering round (no prediction
// could be in time), later otherwise; it was found offline when check
// found a property the control's check does not; it was caught before it
// bit when found offline or, biting later, predicted in time. A survivor
// (no seed bit) that check found is latent, latent confirmed when the
// directed run is real. A survivor's false alarms are its watch run's
// predictions of properties the control's watch run does not predict,
// split by verdict (a prediction of its confirmed latent bug is real).
// The last line of the output is one JSON object with the totals: bugs,
// confirmed, found, found_by_check, found_by_emulate, killed, at_start,
// found_offline, caught_before_bite, online_runs, predicted_in_time,
// prevented, latent, latent_confirmed, false_alarms, false_alarms_real,
// false_alarms_model_only, false_alarms_wrong, control_runs,
// control_alarms, original_false_alarms, original_alarms_real and
// runs_failed. A run that stops with an error of the toolchain itself
// (a replayed object diverging at a checkpoint, say: exit status 1) is
// recorded with its message and counted in runs_failed, never as an
// alarm or a prevention; a usage error stops the board.
//
// Every run is a pure function of the corpus, the module, the plan and
// the seeds: searches are bounded by depth, states and walks, never by
// wall time. Adding a bug is a patch file and a Corpus entry
// (README, "Checking a service you did not write for crystalball").
package main
