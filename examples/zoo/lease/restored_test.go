package lease_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/zoo/lease"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// restoredRun emulates the zoo's lease case (five nodes, churn 2/min from
// 10 s, as the scoreboard runs it) with seed in mode Steer with the
// immediate check, for until, with set applied to the steering
// configuration (nil: emulation.ModeConfig's), stopping soon after the
// first OneHolder violation when stop is set (the emulator checks its
// context every 1,024 events). It returns the first OneHolder violation
// (zero: none) and the drops at the grantor that a restored filter made,
// and how many of those came at or after back (when the grantor comes up
// from the restart that the violation without CrystalBall follows).
func restoredRun(t *testing.T, seed uint64, back time.Duration, set func(*emulation.SteeringConfig), until time.Duration, stop bool) (violated time.Duration, restored []string, late int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	snaps, steer := emulation.ModeConfig(steering.Steer, 5, true)
	if set != nil {
		set(steer)
	}
	steer.OnIntervention = func(iv emulation.Intervention) {
		if iv.Node == lease.Grantor && iv.Why != nil && iv.Why.Source == "restored" {
			restored = append(restored, fmt.Sprintf("%v %v", iv.At, iv.Event))
			if iv.At >= back {
				late++
			}
		}
	}
	cfg := emulation.Config{Spec: lease.Spec(false), Nodes: 5, Seed: seed, Duration: until, Workload: lease.Workload,
		Churn: emulation.ChurnConfig{Rate: 2, After: 10 * time.Second}, Snapshots: snaps, Steering: steer,
		Observers: emulation.Observers{OnViolation: func(v emulation.Violation) {
			if v.Property == "OneHolder" && violated == 0 {
				violated = v.At.Sub(emulation.Epoch)
				if stop {
					cancel()
				}
			}
		}},
	}
	e, err := emulation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(ctx); err != nil && !(stop && violated != 0 && errors.Is(err, context.Canceled)) {
		t.Fatalf("%v; rerun with seed=%d", err, seed)
	}
	return violated, restored, late
}

// checkRestored asserts on seed, with set (nil: none) applied to the
// steered run, that steering's durable state prevents the grant a reset
// makes possible: steered, no OneHolder violation within until and some
// drop by a restored filter at the grantor after its restart (back);
// without steering the same run violates OneHolder within until (that run
// stops at its violation), so the episode is there to prevent.
func checkRestored(t *testing.T, seed uint64, back, until time.Duration, set func(*emulation.SteeringConfig)) {
	t.Helper()
	violated, restored, late := restoredRun(t, seed, back, set, until, false)
	if violated != 0 {
		t.Errorf("steered: OneHolder violated at %v, want no violation within %v (seed %d)", violated, until, seed)
	}
	if late == 0 {
		t.Errorf("steered: no drop by a restored filter at the grantor after its restart at %v (seed %d); all: %q", back, seed, restored)
	}
	violated, _, _ = restoredRun(t, seed, back, func(s *emulation.SteeringConfig) {
		s.Controller.Mode, s.Immediate = steering.Off, false
	}, until, true)
	if violated == 0 {
		t.Errorf("without steering: no OneHolder violation within %v (seed %d): the episode steering is to prevent is not there", until, seed)
	}
}

// grantorRounds makes the grantor the only node that runs rounds (every
// node keeps the immediate check) and bounds a round's liveness search at
// 4,000 steps instead of steering.DefaultMaxWalkSteps' 40,000.
func grantorRounds(s *emulation.SteeringConfig) {
	s.Predictors = func(id node.ID) bool { return id == lease.Grantor }
	s.Controller.MaxWalkSteps = 4_000
}

// TestRestoredFilterPreventsTheGrantAfterAReset is the lease test
// in a quick form (TestRestoredFilterAfterTheScoreboardsReset, build tag
// long, runs the scoreboard's seed 1 to 2:30 as the scoreboard configures
// it): the grantor's filter against a post-reset grant is durable, comes
// back when the grantor restarts, and stays in force until the restarted
// grantor's rounds can judge it (steering.Config.UnseenHold). Seed 14,
// found by a scan of seeds 1–150 for a grantor reset within the first
// minute, is the same episode 1:37 sooner: n5 holds the lease granted at
// 2.6 s when the grantor is back up from a reset at 31.49 s; with nothing
// durable the grantor grants n4 too and OneHolder breaks at 31.91 s;
// steered, the restored filter drops n4's request at 31.84 s and nothing
// violates within 50 s (18 s after the grant, as 2:30 is 21 s after seed
// 1's). Only the grantor's rounds matter here (the clients' rounds, on
// snapshots of at most two nodes, predict, install and request nothing
// in this run), so only the grantor runs them, and its liveness searches
// stop at 4,000 steps (at 2,000 the steered run violates at 31.91 s too):
// with the defaults seed 14 gives the same outcome and the same drop at
// 31.84 s, and seed 1 still passes with these settings, at about 40% of
// the cost (two of the grantor's rounds spent the default 40,000 steps,
// about 2 s each under the race detector).
// The nothing-durable run stops at its violation (run on to 1:08, its
// grantor's filters of unknown origin are labelled "restored" as well).
func TestRestoredFilterPreventsTheGrantAfterAReset(t *testing.T) {
	// The grantor is back up at 31.49 s (2:08.25 for seed 1, whose test
	// takes 2:08 likewise).
	checkRestored(t, 14, 31*time.Second, 50*time.Second, grantorRounds)
}

// TestSteeringMessagesCrossTheLinks: with the link model on (the paper's
// INET access links), steering requests and answers are sized and carried
// like every other message — they once failed the run, as the emulator's
// wire registry lacked them — and their count and bytes are reported.
// With seed 1 the first request and its answer cross by 10 s, so 12 s
// of the lease case shows it (the whole 2:30 carries 4 of each).
func TestSteeringMessagesCrossTheLinks(t *testing.T) {
	snaps, steer := emulation.ModeConfig(steering.Steer, 5, true)
	cfg := emulation.Config{Spec: lease.Spec(false), Nodes: 5, Seed: 1, Duration: 12 * time.Second, Workload: lease.Workload,
		Churn: emulation.ChurnConfig{Rate: 2, After: 10 * time.Second}, Snapshots: snaps, Steering: steer,
		Network: emulation.INETAccessLinks(emulation.NetworkConfig{})}
	e, err := emulation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(context.Background())
	if err != nil {
		t.Fatalf("%v; rerun with seed=1", err)
	}
	s := res.Steering
	if s.RequestsSent == 0 || s.RequestMessages != int64(s.RequestsSent) || s.AnswerMessages == 0 {
		t.Fatalf("requests sent %d, request messages %d, answers %d: want some, one message each", s.RequestsSent, s.RequestMessages, s.AnswerMessages)
	}
	if s.RequestBytes <= 100*s.RequestMessages || s.AnswerBytes <= 10*s.AnswerMessages {
		t.Errorf("request bytes %d for %d, answer bytes %d for %d: too few for a path and a frame", s.RequestBytes, s.RequestMessages, s.AnswerBytes, s.AnswerMessages)
	}
}
