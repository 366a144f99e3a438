package emulation_test

import (
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// Without a finite link the snapshot configuration is left as it is; on
// the INET links the timeouts are the linked ones, scaled with a slower
// uplink, never shortened, and the last round finishes.
func TestLinkedSnapshots(t *testing.T) {
	base := snapshot.Config{Interval: 10 * time.Second, GatherConfig: snapshot.GatherConfig{GatherInterval: 10 * time.Second}}
	if got := emulation.LinkedSnapshots(base, emulation.NetworkConfig{}); got != base {
		t.Errorf("no links: %+v, want it unchanged", got)
	}
	for _, c := range []struct {
		net            emulation.NetworkConfig
		gather, record time.Duration
	}{
		{emulation.INETAccessLinks(emulation.NetworkConfig{}), 15 * time.Second, 6 * time.Second},
		{emulation.NetworkConfig{Uplink: emulation.INETUplink / 2}, 30 * time.Second, 12 * time.Second},
		{emulation.NetworkConfig{Downlink: emulation.INETDownlink}, 15 * time.Second, 6 * time.Second},
		{emulation.NetworkConfig{Uplink: 100 * emulation.INETUplink}, snapshot.DefaultGatherTimeout, snapshot.DefaultRecordTimeout},
	} {
		got := emulation.LinkedSnapshots(base, c.net)
		if got.GatherTimeout != c.gather || got.RecordTimeout != c.record || !got.FinishLastRound || got.Interval != base.Interval {
			t.Errorf("%+v: gather %v record %v finish %v, want %v %v true", c.net, got.GatherTimeout, got.RecordTimeout, got.FinishLastRound, c.gather, c.record)
		}
	}
	long := base
	long.GatherTimeout = time.Minute
	if got := emulation.LinkedSnapshots(long, emulation.INETAccessLinks(emulation.NetworkConfig{})); got.GatherTimeout != time.Minute {
		t.Errorf("a longer gather timeout became %v", got.GatherTimeout)
	}
}
