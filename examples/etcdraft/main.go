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
	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/examples/etcdraft/kv"
	"github.com/seed6eee2ec7/crystalball/node"
)

func main() { cli.Main(service()) }

// service is the store as a cli.Service: three members by default, the
// planted bug unless --fix names its correction.
func service() cli.Service {
	s, err := configure(nil, 0)
	if err != nil {
		panic(err) // the defaults are valid
	}
	s.Configure = configure
	return s
}

// configure builds the service for a run: the corrections fixes name and
// nodes members (0: the default, 3).
func configure(fixes []string, nodes int) (cli.Service, error) {
	opts := kv.DefaultOptions()
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
		Name:      kv.Name,
		Spec:      spec,
		Workload:  kv.Workload,
		Summarize: summarize,
		Options:   opts.String(),
		Configure: configure,
	}, nil
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
