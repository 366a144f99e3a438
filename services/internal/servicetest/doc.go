// Package servicetest is the test kit the services of this module share,
// as etcd raft's rafttest is raft's: what their tests did alike, each in
// its own copy, written once. It is for tests only (production code must
// not import it) and builds on package nodetest, the public harness, and
// on the explorer and the emulator:
//
//   - harness hooks: PeerCall reads an application call that names a
//     peer ("app ID join BOOTSTRAP"), SummaryCommand is the scripts'
//     "summary" command, Conformance runs nodetest.Conformance over a
//     service's option sets and seeds;
//   - states and properties: View is a hand-built node.View, Property
//     finds a property by name, CheckpointRoundTrip holds a state to the
//     checkpoint codec's contract and EncodingMatchesReflection a
//     hand-written encoder to the layout the decoder reads;
//   - the explorer: LiveModel builds the actor model of a harness's nodes
//     as a gathered snapshot would, Predict runs consequence prediction
//     for one property;
//   - the emulator: Emulate runs a configuration to its end, RequireLive
//     and RequireSafe judge its result, Safety and SafetyCount read one
//     property's;
//   - benchmarks: BenchHash, BenchAppendCheckpoint and BenchClone are the
//     bodies of the state benchmarks every service runs.
//
// The contract: every helper is as deterministic as what it drives — the
// same arguments give the same harness, model, run and verdicts — and
// starts no goroutine of its own (an explorer run uses the workers it is
// configured with). A helper that cannot go on fails its testing.TB with
// Fatal; a verdict (RequireLive, RequireSafe, CheckpointRoundTrip's
// comparisons) reports with Error or Fatal as its documentation says.
//
// The package is internal to services: only the services' tests can
// import it.
package servicetest
