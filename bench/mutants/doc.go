// Command mutants is issue 28's mutation corpus and its scoreboard: it
// makes hundreds of mechanically planted bugs in the handler code of
// every service the project ships and of the bug zoo's cases, and scores
// deep online debugging and steering on them.
//
//	go run ./bench/mutants gen [--seed 1] [--per-op 4] [--out bin/mutants]
//	bin/mutants/run run [--sample all|sample|short] [--seeds 1] [--jobs 2] [--json F] [--svg F]
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
//   - false alarm: a surviving mutant whose debug run predicted a
//     property the original's debug run did not (a survivor can still be
//     a real bug the run did not hit: no prediction is replayed to
//     confirm it); an original's false alarm (original_false_alarms) is a
//     prediction of a property its own off run kept.
//
// The last line of run's output is one JSON object with the totals.
// Every run is a pure function of the corpus, the mutant and the seed;
// run --jobs N splits the mutants over N processes (results identical).
package main
