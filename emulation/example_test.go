package emulation_test

import (
	"context"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// Eight RandTree nodes join through n1 on the emulated wide-area network
// while one node a minute leaves and comes back; the Result says what
// happened, the same for the same seed.
func ExampleEmulator_Run() {
	e, err := emulation.New(emulation.Config{
		Spec:     randtree.NewSpec(randtree.DefaultOptions()), // the paper's code, bugs included
		Nodes:    8,
		Seed:     1,
		Duration: 3 * time.Minute,
		Workload: func(id node.ID, restart bool) []node.Message {
			return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
		},
		Churn: emulation.ChurnConfig{Rate: 1, Until: 2 * time.Minute},
	})
	if err != nil {
		panic(err)
	}
	r, err := e.Run(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(r)
	// Output:
	// seed 1, 8 nodes, 3m0s virtual: 1013 events (init 8, message 618, timer 225, app 10, transport-error 148, down 2, up 2)
	// messages: sent 765, delivered 618, dropped 147, filtered 0, in flight 0, retransmissions 1
	// transport errors 148, resets 2, churn leaves 2 (1 silent), rejoins 2
	// safety ChildrenSiblingsDisjoint: holds
	// safety RootNotChildOrSibling: holds
	// safety RootHasNoSiblings: holds
	// safety RecoveryTimerRuns: holds
	// liveness OneRoot: holds at the end
	// liveness AllJoined: holds at the end
	// liveness RootOrParent: holds at the end
	// liveness ParentChildAgree: holds at the end
	// liveness NoLoops: holds at the end
}
