package tool

import "testing"

// TestBadNumericFlagsAreUsageErrors goes through every subcommand's numeric
// flags: a negative count, an interval below minInterval or a size beyond
// the documented bound is a one-line usage error (exit 2), never accepted
// as "auto" or run (--snapshots 1ns, --steer-states -1 and --predictors -1
// used to pass).
func TestBadNumericFlagsAreUsageErrors(t *testing.T) {
	debug := []string{"emulate", "--mode", "debug"}
	nodeArgs := []string{"node", "--id", "1"}
	cases := []struct {
		args []string
		want string
	}{
		{append(debug, "--steer-states", "-1"), "--steer-states must be 0 or more (not negative), got -1"},
		{append(debug, "--predictors", "-1"), "--predictors must be 0 or more (not negative), got -1"},
		{append(debug, "--steer-breaks", "-1"), "--steer-breaks must not be negative, got -1"},
		{append(debug, "--steer-drops", "-1"), "--steer-drops must not be negative, got -1"},
		{append(debug, "--steer-resets", "-1"), "--steer-resets must not be negative, got -1"},
		{append(debug, "--steer-refusals", "-1"), "--steer-refusals must not be negative, got -1"},
		{[]string{"emulate", "--snapshots", "1ns"}, "--snapshots must be 0 (off) or at least 10ms, got 1ns"},
		{[]string{"emulate", "--snapshots", "9ms"}, "--snapshots must be 0 (off) or at least 10ms"},
		{[]string{"emulate", "--snapshots", "-1ns"}, "--snapshots must not be negative"},
		{[]string{"emulate", "--heal", "-1m"}, "--heal must not be negative"},
		{[]string{"emulate", "--downtime", "0s"}, "--downtime must be positive"},
		{[]string{"emulate", "--nodes", "2000000"}, "--nodes must be positive and at most"},
		{[]string{"emulate", "--seed", "-1"}, "invalid value"},
		{append(debug, "--walk-steps", "-1"), "--walk-steps must be positive"},
		{append(debug, "--walk-warmup", "-1"), "--walk-warmup must be at least 0"},

		{append(nodeArgs, "--snapshots", "1ns"), "--snapshots must be 0 (off) or at least 10ms, got 1ns"},
		{append(nodeArgs, "--snapshots", "-1s"), "--snapshots must not be negative"},
		{append(nodeArgs, "--snapshots", "1s", "--gather", "1ms"), "--gather must be 0 (off) or at least 10ms, got 1ms"},
		{append(nodeArgs, "--snapshots", "1s", "--gather", "-1s"), "--gather must not be negative"},
		{append(nodeArgs, "--steer-states", "-1"), "--steer-states must be 0 or more (not negative), got -1"},
		{append(nodeArgs, "--steer-resets", "-1"), "--steer-resets must not be negative"},
		{append(nodeArgs, "--steer-breaks", "-1"), "--steer-breaks must not be negative"},
		{append(nodeArgs, "--steer-drops", "-1"), "--steer-drops must not be negative"},
		{append(nodeArgs, "--steer-refusals", "-1"), "--steer-refusals must not be negative"},
		{append(nodeArgs, "--steer-time", "0s"), "--steer-time must be positive"},
		{append(nodeArgs, "--steer-last-known", "-1s"), "--steer-last-known must not be negative"},
		{append(nodeArgs, "--filter-hold", "-1s"), "--filter-hold and --veto-hold must not be negative"},
		{append(nodeArgs, "--veto-hold", "-1m"), "--filter-hold and --veto-hold must not be negative"},
		{append(nodeArgs, "--nodes", "-1"), "--nodes must be in 0..65536"},
		{append(nodeArgs, "--walks", "-1"), "--walks must not be negative"},
		{append(nodeArgs, "--walk-weights", "timer=-1"), "--walk-weights: \"timer=-1\" is not KIND=W"},
		{append(nodeArgs, "--walk-weights", "bogus=1"), "--walk-weights: unknown kind \"bogus\""},
		{[]string{"emulate", "--walk-weights", "timer"}, "--walk-weights: \"timer\" is not KIND=W"},
		{append(nodeArgs, "--seed", "-1"), "invalid value"},

		{[]string{"check", "--walks", "-1"}, "must not be negative"},
		{[]string{"check", "--strategy", "walk", "--walks", "0"}, "walks and dmax positive"},
		{[]string{"check", "--dmax", "0"}, "walks and dmax positive"},
		{[]string{"check", "--budget", "-1s"}, "must not be negative"},
		{[]string{"check", "--max-states", "-1"}, "must not be negative"},
		{[]string{"check", "--max-depth", "-1"}, "must not be negative"},
		{[]string{"check", "--resets", "-1"}, "must not be negative"},
		{[]string{"check", "--drops", "-1"}, "must not be negative"},
		{[]string{"check", "--refusals", "-1"}, "must not be negative"},
		{[]string{"check", "--weights", "refuse=-1"}, "is not KIND=W"},
		{[]string{"check", "--workers", "-1"}, "must not be negative"},
		{[]string{"check", "--periphery", "-1"}, "must not be negative"},
		{[]string{"check", "--nodes", "0"}, "--nodes must be in 1..1024"},
		{[]string{"check", "--nodes", "100000000"}, "--nodes must be in 1..1024"},
		{[]string{"check", "--nodes", "65536"}, "a search over more nodes exhausts memory"},
		{[]string{"check", "--model", "2pc", "--rms", "0"}, "--rms must be in 1.."},

		{[]string{"trace", "show", "--violation", "first", "f.json"}, "invalid value"},

		{[]string{"experiment", "randtree-churn", "--snapshots", "1ns"}, "--snapshots must be 0 (off) or at least 10ms"},
		{[]string{"experiment", "randtree-churn", "--nodes", "-1"}, "--nodes must be in 1..1000"},
		{[]string{"experiment", "randtree-churn", "--max-states", "-1"}, "--max-states and --snapshots positive"},
		{[]string{"experiment", "paxos", "--bug", "1", "--snapshots", "1ns"}, "--snapshots must be 0 (off) or at least 10ms"},
		{[]string{"experiment", "paxos", "--bug", "1", "--runs", "-1"}, "--runs, --max-states, --snapshots and --workers must be positive"},
		{[]string{"experiment", "paxos", "--bug", "1", "--resets", "-1"}, "--resets and --last-known not negative"},
		{[]string{"experiment", "paxos", "--bug", "1", "--run", "-2"}, "--run must be a run number"},
		{[]string{"experiment", "randtree-liveness", "--seed", "1", "--snapshots", "1ms"}, "--snapshots must be 0 (off) or at least 10ms"},
		{[]string{"experiment", "randtree-liveness", "--seed", "1", "--nodes", "100000000"}, "--nodes in 3..1048576"},
		{[]string{"experiment", "randtree-liveness", "--seed", "1", "--steer-resets", "-1"}, "--steer-resets not negative"},
		{[]string{"experiment", "randtree-liveness", "--seed", "1", "--walks", "-1"}, "--walks must not be negative"},
		{[]string{"experiment", "randtree-prediction", "--budget", "-1s"}, "--budget and --max-states must not be negative"},
		{[]string{"experiment", "randtree-prediction", "--max-states", "-1"}, "--budget and --max-states must not be negative"},
		{[]string{"experiment", "macemc-baseline", "--service", "randtree", "--bfs-nodes", "0"}, "--bfs-nodes must be in 1..64"},
		{[]string{"experiment", "macemc-baseline", "--service", "randtree", "--steer-states", "-1"}, "--steer-states must be 0 or more (not negative)"},
		{[]string{"experiment", "macemc-baseline", "--service", "randtree", "--predictors", "-1"}, "--predictors must be 0 or more (not negative)"},
		{[]string{"experiment", "macemc-baseline", "--service", "randtree", "--snapshots", "1ns"}, "--snapshots must be 0 (off) or at least 10ms"},
	}
	for _, c := range cases {
		expectUsageError(t, c.args, c.want)
	}
}
