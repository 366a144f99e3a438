package consequence_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// TestZeroOptionsMeanDefaults pins the config convention: a zero Options,
// WalkOptions or ActorOptions field stands for what the Default function
// returns, so both give the same search, walks and model.
func TestZeroOptionsMeanDefaults(t *testing.T) {
	ctx := context.Background()
	g := &graph{seed: 3, size: 200, nodes: 2, fanout: 3}
	zero, err := consequence.NewChecker(g).Properties(graphProps()...).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	def, err := consequence.NewChecker(g).Properties(graphProps()...).WithOptions(consequence.DefaultOptions()).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if zero.Unique != def.Unique || zero.Workers != def.Workers || len(zero.Violations) != len(def.Violations) || !reflect.DeepEqual(zero.DepthCounts, def.DepthCounts) {
		t.Errorf("zero Options: %d states, %d workers, %d violations; DefaultOptions: %d, %d, %d",
			zero.Unique, zero.Workers, len(zero.Violations), def.Unique, def.Workers, len(def.Violations))
	}

	reach := []consequence.Property[uint64]{consequence.Eventually("reach-7", func(s uint64) error {
		if s != 7 {
			return fmt.Errorf("at %d", s)
		}
		return nil
	})}
	zw, err := consequence.RandomWalks(ctx, g, reach, consequence.WalkOptions[gAct]{})
	if err != nil {
		t.Fatal(err)
	}
	dw, err := consequence.RandomWalks(ctx, g, reach, consequence.DefaultWalkOptions[gAct]())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(zw, dw) {
		t.Errorf("zero WalkOptions: %d walks, %d live; DefaultWalkOptions: %d, %d", zw.Walks, zw.Live, dw.Walks, dw.Live)
	}
	if d := consequence.DefaultWalkOptions[gAct](); d.Walks != consequence.DefaultWalks || d.DMax != consequence.DefaultDMax || d.K != consequence.DefaultK {
		t.Errorf("DefaultWalkOptions() = %+v", d)
	}

	za, err := consequence.NewActorModel(dgramSpec("a", "b"), consequence.ActorOptions{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	do := consequence.DefaultActorOptions()
	do.N = 2
	da, err := consequence.NewActorModel(dgramSpec("a", "b"), do)
	if err != nil {
		t.Fatal(err)
	}
	if za.Start().Fingerprint() != da.Start().Fingerprint() {
		t.Error("zero ActorOptions and DefaultActorOptions build different start states")
	}
	if _, now, _ := za.Start().NodeState(node.ID(1)); !now.Equal(consequence.DefaultStart) {
		t.Errorf("zero ActorOptions.Start: clock %v, want DefaultStart %v", now, consequence.DefaultStart)
	}
}

// ResetKinds print as they parse; anything else is refused.
func TestResetKindsNames(t *testing.T) {
	for _, k := range []consequence.ResetKinds{consequence.ResetRST, consequence.ResetSilent, consequence.ResetBoth} {
		got, err := consequence.ParseResetKinds(k.String())
		if err != nil || got != k {
			t.Errorf("ParseResetKinds(%q) = %v, %v", k.String(), got, err)
		}
	}
	if _, err := consequence.ParseResetKinds("none"); !errors.Is(err, consequence.ErrInvalidOptions) {
		t.Errorf("ParseResetKinds(none): %v", err)
	}
}
