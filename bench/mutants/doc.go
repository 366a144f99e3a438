// Command mutants is a mutation corpus and its scoreboard: it makes
// hundreds of mechanically planted bugs in the handler code of every
// service the project ships and of the bug zoo's cases, and scores the
// whole toolchain on them — the offline check a team runs before
// deploying, deep online debugging and steering.
//
//	go run ./bench/mutants gen [--seed 1] [--per-op 4] [--out bin/mutants]
//	bin/mutants/run run [--sample all|sample|short] [--seeds 1] [--jobs 2] [--json F] [--svg F]
//	bin/mutants/run run --shard I/N --out F [--sample …] [--seeds …]
//	bin/mutants/run merge [--json F] [--svg F] F...
//	go run ./bench/mutants show --id N
//
// gen selects the corpus (package mutate: per service and operator, up to
// --per-op sites in an order shuffled by --seed), renders it as a mutant
// schema, and builds this command with it (go build -overlay) as
// bin/mutants/run; a mutant the compiler rejects is discarded and listed
// in the manifest (bin/mutants/manifest.json). show prints one mutant as
// plain code. run, in the program gen built, scores the mutants: `make
// mutants` runs the whole corpus, `make mutants-sample` the sample.
//
// # Scaling out
//
// run --shard I/N runs every N-th mutant from the I-th (and the originals
// of every N-th service) alone and writes its raw results to --out; merge
// reads N such files, checks that they are one run's shards 0..N-1 of the
// manifest's corpus with the same sample, seeds and services, and prints
// the same scoreboard run does. Shards are independent processes, so any
// batch scheduler runs them: GNU parallel on one machine,
//
//	parallel bin/mutants/run run --quiet --shard {}/8 --out shard{}.json ::: 0 1 2 3 4 5 6 7
//	bin/mutants/run merge shard*.json
//
// a Kubernetes Indexed Job (--shard $JOB_COMPLETION_INDEX/N) or a Slurm
// array (--shard $SLURM_ARRAY_TASK_ID/N) on many. run --jobs N is the same
// shards as child processes of one run. A corpus may also be split by
// service: merge joins runs of disjoint --services lists, each complete
// (--shard 0/1 for a run in one piece), into one board of their union,
// and refuses lists that overlap or runs with other seeds or samples:
//
//	parallel bin/mutants/run run --quiet --services {} --shard 0/1 --out {}.json ::: chord pastry zoo-cache
//	bin/mutants/run merge chord.json pastry.json zoo-cache.json
//
// # Verdicts
//
// Every mutant runs in its service's deployment for 90 s of virtual time
// (the zoo's cases with their nodes, workload and fault rates; the
// shipped services with every correction on 5 nodes with churn and
// connection breaks 2/min), faults starting after 10 s and ending 30 s
// before the end so that liveness is judged on a healed
// system; runs go through examples/zoo/scoreboard.RunOne.
//
//   - killed: the run without CrystalBall (off) violated a safety property
//     that the original's off run with the same seed did not, or ended
//     with a liveness property failing that held in the original's;
//   - predicted in time: the debug run (deep online debugging, same seed)
//     predicted a property the mutant broke before its first violation
//     (in the debug run, or the off run if the debug run did not break
//     it; a liveness failure's time is the end of the run), the lead
//     being the difference. A round's finding that no walk from its
//     snapshot satisfies a liveness property (steering.LivenessOutcome.
//     DeadAtStart) is not a prediction — rounds find the originals'
//     liveness properties dead at their first snapshots too — and is
//     counted apart (dead_at_start);
//   - prevented: the steer run (every node steering, immediate safety
//     check) broke none of the killing safety properties and ended with
//     every liveness property the original kept holding;
//   - crashed: the off run ended in a handler's panic or spent the event
//     budget (300,000 handler steps: a message storm), counted apart from
//     killed and survived (no property describes it, nothing predicts it);
//   - found offline: the mutant's offline check — breadth-first search
//     from the deployment's initial configuration (its nodes and
//     workload; a node reset if it churns, a connection break if it
//     breaks connections) within 100,000 states, then, if it found
//     nothing, MaceMC's liveness search (50 random walks of 300 steps,
//     seed 1, a suspect's critical transition; a C1 verdict is a
//     finding), the same for every seed — violated a property the
//     original's offline check does not, or the same property when the
//     emulator confirms the mutant's finding and not the original's (what
//     check --confirm shows a team: real on one, model-only on the
//     other). merge scores result files by this rule, from the offline
//     results they hold. A
//     finding is confirmed when the emulator, forced along the found path
//     (emulation.Emulator.ReplayPath, its nodes started together, no
//     fault of its own), takes every step and violates the property too
//     (a liveness property: fails at the end of a run from there);
//   - at start / later: a killed mutant bites at its earliest killing
//     property's first violation (safety) or first outage (liveness; the
//     end of the run without one); at start means before the debug run's
//     first steering round reported, when no online prediction can be in
//     time. Caught before it bites: found offline, or, biting later,
//     predicted in time;
//   - latent: a survivor found offline; latent confirmed when the
//     emulator confirmed it (a real bug the emulated seed missed);
//   - false alarm: a surviving mutant whose debug run predicted a
//     property the original's debug run did not, unless that property is
//     its confirmed latent bug (counted as a real alarm, false_alarms_real);
//     an original's false alarm (original_false_alarms) is a prediction
//     of a property its own off run kept. The originals' offline findings
//     and how many the emulator confirms are counted apart
//     (original_offline, original_offline_confirmed).
//
// The misses — killed mutants not caught before they bit — are tallied
// by class (by_miss): when the mutant bit (at start, later), then why the
// offline check did not catch it (its search completed without a
// violation: the bug is outside the model; it ran out of budget; it found
// only what the original's check finds too; it failed), and for a later
// bite whether the rounds predicted it after the bite or not at all.
//
// The last line of run's (and merge's) output is one JSON object with the
// totals, among them killed, caught_before_bite, found_offline,
// predicted_in_time, prevented, latent_confirmed and false_alarms.
// Every run is a pure function of the corpus, the mutant and the seed;
// run --jobs N splits the mutants over N processes (results identical).
package main
