package main

import (
	"embed"
	"fmt"
	"path"
)

// patches holds each bug's reverse patch, bench/realbugs/patches/NAME.patch:
// a unified diff against the library's module as go.mod requires it
// (go.etcd.io/raft/v3 v3.7.0) that puts the bug back, written from the
// fix named in the corpus entry (the fix itself was made against an
// older tree, so its literal reverse rarely applies).
//
//go:embed patches/*.patch
var patches embed.FS

// Module is the library the corpus reverts fixes of: its module path as
// go.mod requires it.
const Module = "go.etcd.io/raft/v3"

// Bug is one historical bug of the library, put back.
type Bug struct {
	// Name names the bug and its patch (patches/Name.patch).
	Name string
	// Fix is the upstream commit that fixed the bug and its title
	// (github.com/etcd-io/raft, or etcd's raft/ before the split).
	Fix string
	// Kind is what the bug breaks when it bites: "safety", "liveness"
	// or "efficiency" (extra messages or resends; no property of a
	// correct deployment fails).
	Kind string
	// Package and Test are the library's own regression test that
	// confirms the patch: `go test -run Test ./Package` in the module
	// fails with the patch applied and passes without it.
	Package, Test string
	// Service is the configuration of examples/etcdraft the bug is
	// scored on: etcdkv-busy (raft as etcd runs it, with a client busy
	// for the whole run) or etcdkv-small (the same with snapshots and
	// flow-control limits small enough to be reached).
	Service string
}

// Patch returns the bug's reverse patch.
func (b Bug) Patch() ([]byte, error) {
	p, err := patches.ReadFile(path.Join("patches", b.Name+".patch"))
	if err != nil {
		return nil, fmt.Errorf("realbugs: %s: %w", b.Name, err)
	}
	return p, nil
}

// Corpus is the corpus, oldest fix first.
var Corpus = []Bug{
	{
		Name:    "appresp-out-of-order-decreases-match",
		Fix:     "57b3274 raft: should not decrease match and next when handling out of order msgAppResp (2014)",
		Kind:    "efficiency",
		Package: "tracker", Test: "TestProgressUpdate",
		Service: "etcdkv-busy",
	},
	{
		Name:    "stale-reject-decreases-next",
		Fix:     "91ff7cd raft: do not decrease nextIndex and send entries for stale reply (2014)",
		Kind:    "efficiency",
		Package: "tracker", Test: "TestProgressMaybeDecr",
		Service: "etcdkv-busy",
	},
	{
		Name:    "snapshot-truncates-matching-log",
		Fix:     "80615be raft: do not restore snapshot if local raft has longer matching history (2014)",
		Kind:    "safety",
		Package: ".", Test: "TestRestoreIgnoreSnapshot",
		Service: "etcdkv-small",
	},
	{
		Name:    "vote-reset-same-term",
		Fix:     "9d2a465 raft: do not reset vote if term is not changed (2015)",
		Kind:    "safety",
		Package: ".", Test: "TestLeaderElectionOverwriteNewerLogs",
		Service: "etcdkv-busy",
	},
	{
		Name:    "readindex-forwarded-with-term",
		Fix:     "06b9fc9 raft: do not attach term to MsgReadIndex (2016)",
		Kind:    "liveness",
		Package: ".", Test: "TestNodeReadIndexToOldLeader",
		Service: "etcdkv-busy",
	},
	{
		Name:    "prevote-lower-term-ignored",
		Fix:     "3c7359d raft: fix Pre-Vote migration (2017)",
		Kind:    "liveness",
		Package: ".", Test: "TestPreVoteMigrationCanCompleteElection",
		Service: "etcdkv-busy",
	},
	{
		Name:    "readindex-before-first-commit",
		Fix:     "3189a66 raft: postpone MsgReadIndex until first commit in the term (2021)",
		Kind:    "safety",
		Package: ".", Test: "TestReadOnlyForNewLeader",
		Service: "etcdkv-busy",
	},
	{
		Name:    "inflights-bytes-leak",
		Fix:     "e419ba5 tracker: fix byte counter leak in Inflights tracker (2023)",
		Kind:    "liveness",
		Package: "tracker", Test: "TestInflightsReset",
		Service: "etcdkv-small",
	},
}
