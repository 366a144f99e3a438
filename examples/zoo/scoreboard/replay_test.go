package scoreboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/examples/zoo/scoreboard"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// TestReplayPrediction: the planted bug's prediction, replayed by forcing
// the emulator along its path from the round that made it, is real; the
// twin's prediction of it is not.
func TestReplayPrediction(t *testing.T) {
	const seed = 1
	cfg := scoreboard.Config{Duration: time.Minute, Heal: 10 * time.Second}
	v, why, err := scoreboard.ReplayPrediction(context.Background(), cfg, lockCase(), false, steering.Debug, seed, "MutualExclusion")
	if err != nil || v != scoreboard.AlarmReal {
		t.Fatalf("seed=%d: the planted bug's prediction replayed as %q (%s), %v; want real", seed, v, why, err)
	}
	// The twin keeps the lock until it is released, so no path breaks
	// mutual exclusion; its rounds still predict it (they explore resets
	// of the server), and the replay must not confirm that.
	tv, twhy, err := scoreboard.ReplayPrediction(context.Background(), cfg, lockCase(), true, steering.Debug, seed, "MutualExclusion")
	if err != nil || tv == scoreboard.AlarmReal {
		t.Fatalf("seed=%d: the twin's prediction replayed as %q (%s), %v; want model-only or wrong", seed, tv, twhy, err)
	}
	if _, _, err := scoreboard.ReplayPrediction(context.Background(), cfg, lockCase(), false, steering.Off, seed, "MutualExclusion"); err == nil {
		t.Fatal("an off run replayed a prediction")
	}
}
