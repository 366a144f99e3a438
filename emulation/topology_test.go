package emulation_test

import (
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

func TestAccessTopologyMatchesPaperParameters(t *testing.T) {
	const n = 100
	topo, err := emulation.NewAccessTopology(n, emulation.AccessConfig{}, 17)
	if err != nil {
		t.Fatal(err)
	}
	var sum time.Duration
	var pairs int
	minLoss, maxLoss := 1.0, 0.0
	for a := node.ID(1); a <= n; a++ {
		if acc := topo.Access(a); acc <= 0 {
			t.Fatalf("access latency of %v is %v", a, acc)
		}
		for b := node.ID(1); b <= n; b++ {
			if a == b {
				continue
			}
			ab, ba := topo.Link(a, b), topo.Link(b, a)
			if ab != ba {
				t.Fatalf("asymmetric link %v-%v: %+v vs %+v", a, b, ab, ba)
			}
			if ab.Latency != topo.Access(a)+topo.Access(b) || ab.Jitter != emulation.DefaultJitter {
				t.Fatalf("link %v-%v: %+v", a, b, ab)
			}
			minLoss, maxLoss = min(minLoss, ab.Loss), max(maxLoss, ab.Loss)
			sum += ab.Latency + ba.Latency
			pairs++
		}
	}
	mean := sum / time.Duration(pairs)
	if d := (mean - emulation.DefaultMeanRTT).Abs(); d > time.Microsecond {
		t.Fatalf("mean RTT %v, want 130ms", mean)
	}
	if d := (topo.MeanRTT() - mean).Abs(); d > time.Microsecond {
		t.Fatalf("MeanRTT() = %v, measured %v", topo.MeanRTT(), mean)
	}
	if minLoss < emulation.DefaultLossMin || maxLoss > emulation.DefaultLossMax || maxLoss-minLoss < 0.003 {
		t.Fatalf("losses span [%v, %v], want to fill [0.001, 0.005]", minLoss, maxLoss)
	}

	again, _ := emulation.NewAccessTopology(n, emulation.AccessConfig{}, 17)
	other, _ := emulation.NewAccessTopology(n, emulation.AccessConfig{}, 18)
	same, differ := true, false
	for a := node.ID(1); a <= n; a++ {
		same = same && again.Link(a, a%n+1) == topo.Link(a, a%n+1)
		differ = differ || other.Link(a, a%n+1) != topo.Link(a, a%n+1)
	}
	if !same || !differ {
		t.Fatalf("topology is not a function of its seed (same=%v differ=%v)", same, differ)
	}
}

func TestAccessTopologyValidation(t *testing.T) {
	for _, tc := range []struct {
		n    int
		cfg  emulation.AccessConfig
		want string
	}{
		{0, emulation.AccessConfig{}, "positive node count"},
		{3, emulation.AccessConfig{MeanRTT: -1}, "MeanRTT"},
		{3, emulation.AccessConfig{Spread: 1}, "Spread"},
		{3, emulation.AccessConfig{LossMin: 0.2, LossMax: 0.1}, "loss range"},
		{3, emulation.AccessConfig{LossMax: 1}, "loss range"},
		{3, emulation.AccessConfig{Jitter: -1}, "Jitter"},
	} {
		_, err := emulation.NewAccessTopology(tc.n, tc.cfg, 1)
		if err == nil || !strings.HasPrefix(err.Error(), "emulation: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewAccessTopology(%d, %+v): %v, want %q", tc.n, tc.cfg, err, tc.want)
		}
	}
}

func TestBadTopologyLinkStopsTheRun(t *testing.T) {
	e := mustNew(t, emulation.Config{
		Spec: testSpec(tcfg{nodes: 2}), Nodes: 2, Seed: 1, StartSpread: time.Nanosecond,
		Topology: emulation.UniformTopology{L: emulation.Link{Latency: -time.Second}},
	})
	run(t, e, time.Second)
	if err := e.AppCall(1, SendTo{To: 2, N: 1}); err == nil || !strings.Contains(err.Error(), "topology link") {
		t.Fatalf("AppCall over a negative-latency link: %v", err)
	}
}
