// Command etcdraft runs a small replicated key-value store built on etcd's
// raft library (package kv) through the crystalball command line, as the
// service etcdkv. The store has a planted bug — it applies log entries
// when they are appended, not when they are committed — which --fix
// apply-committed (or --fix all) corrects. Every subcommand comes from
// cli.Main:
//
//	go run ./examples/etcdraft check --nodes 3 --max-depth 6
//	go run ./examples/etcdraft check --nodes 3 --max-depth 9 --fix all
//	go run ./examples/etcdraft emulate --nodes 3 --duration 2m --churn 4/m --seed 9 --mode debug
//	go run ./examples/etcdraft node --id 1 --listen 127.0.0.1:7001 --http 127.0.0.1:8001 --data-dir /tmp/etcdkv/n1
//
// A live node keeps its durable state (raft's HardState, log and
// snapshot, and the applied store: the adapter's durable projection) in
// the store of its --data-dir, written and synced before the messages
// that depend on it leave, so that a restarted process finds its log
// again: raft does not survive a member that loses it.
package main

import (
	"time"

	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/examples/etcdraft/kv"
	"github.com/seed6eee2ec7/crystalball/node"
)

func main() { cli.Main(services()...) }

// Configurations are the store's named configurations, one service each
// (--service NAME): etcdkv is raft as etcd's server runs it
// (kv.DefaultOptions); etcdkv-small the same with limits small enough for
// a short run to reach them — a snapshot every 16 entries keeping 4,
// append messages of at most 256 bytes, 4 of them and 1 KiB in flight — so that
// log compaction, snapshot transfer and flow control are exercised;
// etcdkv-raw raft's zero configuration (no PreVote, no CheckQuorum,
// reads through the log). etcdkv-busy is etcdkv with a client busy for
// the whole of a run (busyClient), and etcdkv-small has that client too:
// the configurations bench/realbugs scores the library's own bugs on.
// etcdkv-join is etcdkv-busy on four nodes of which the fourth joins: a
// leader adds it as a learner and promotes it to voter
// (kv.MembershipOptions); with --nodes N the last node is the joiner.
var Configurations = map[string]func() kv.Options{
	kv.Name:           kv.DefaultOptions,
	kv.Name + "-busy": func() kv.Options { return busyClient(kv.DefaultOptions()) },
	kv.Name + "-small": func() kv.Options {
		o := busyClient(kv.DefaultOptions())
		o.Snapshots = kv.SnapshotOptions{Every: 16, CatchUpEntries: 4}
		o.Raft.MaxSizePerMsg, o.Raft.MaxInflightMsgs, o.Raft.MaxInflightBytes = 256, 4, 1024
		return o
	},
	kv.Name + "-raw": func() kv.Options { return kv.Options{} },
	kv.Name + "-join": func() kv.Options {
		o := busyClient(kv.DefaultOptions())
		o.Nodes, o.Membership.Joiners = 4, 1
		return o
	},
}

// busyClient gives o a client that stays busy for a run of up to 15
// minutes: a Put every second and a Get of another node's key after each
// (the default writer stops after 30 calls, about a minute, and never
// reads).
func busyClient(o kv.Options) kv.Options {
	o.Client.WriteEvery, o.Client.Writes, o.Client.ReadsPerWrite = time.Second, 1800, 1
	return o
}

// services are the configurations as cli.Services, etcdkv first (the
// default --service).
func services() []cli.Service {
	names := []string{kv.Name, kv.Name + "-busy", kv.Name + "-small", kv.Name + "-raw", kv.Name + "-join"}
	out := make([]cli.Service, 0, len(names))
	for _, name := range names {
		configure := configurer(name, Configurations[name])
		s, err := configure(nil, 0)
		if err != nil {
			panic(err) // the configurations are valid
		}
		out = append(out, s)
	}
	return out
}

// configurer builds the service named name for a run: base's options with
// the corrections fixes name, for nodes members (0: the configuration's).
func configurer(name string, base func() kv.Options) func(fixes []string, nodes int) (cli.Service, error) {
	var configure func(fixes []string, nodes int) (cli.Service, error)
	configure = func(fixes []string, nodes int) (cli.Service, error) {
		opts := base()
		if nodes > 0 {
			opts.Nodes = nodes
		}
		for _, f := range fixes {
			if err := kv.Fixes.Enable(&opts, f); err != nil {
				return cli.Service{}, err
			}
		}
		spec, _, err := kv.Spec(opts)
		if err != nil {
			return cli.Service{}, err
		}
		return cli.Service{
			Name:      name,
			Spec:      spec,
			Workload:  kv.Workload,
			Summarize: summarize,
			Options:   opts.String(),
			Configure: configure,
		}, nil
	}
	return configure
}

// summarize: the nodes up, the leaders of the highest term, the highest
// commit index and the keys written everywhere.
func summarize(v node.View) []cli.Figure {
	var up, leaders, commit, top int
	var kvs []map[string]string
	for _, id := range v.Nodes() {
		o, ok := kv.Observed(v, id)
		if !ok {
			continue
		}
		up++
		if int(o.Term) > top {
			top, leaders = int(o.Term), 0
		}
		if int(o.Term) == top && o.State == "StateLeader" {
			leaders++
		}
		commit = max(commit, int(o.Commit))
		kvs = append(kvs, o.App.KV)
	}
	agreed := 0
	if len(kvs) > 0 {
	keys:
		for k, val := range kvs[0] {
			for _, m := range kvs[1:] {
				if m[k] != val {
					continue keys
				}
			}
			agreed++
		}
	}
	return []cli.Figure{{Name: "nodes", Value: up}, {Name: "term", Value: top}, {Name: "leaders", Value: leaders},
		{Name: "commit", Value: commit}, {Name: "keys", Value: agreed}}
}
