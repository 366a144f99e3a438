package emulation_test

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// A scripted scenario: n1 talks to n2, n2 crashes silently (its RST is
// lost), and n1 discovers the stale connection on its next write.
func Example_silentReset() {
	e, err := emulation.New(emulation.Config{
		Spec:        testSpec(tcfg{nodes: 2}),
		Nodes:       2,
		Seed:        1,
		StartSpread: time.Nanosecond,
		Topology:    emulation.UniformTopology{L: emulation.Link{Latency: 10 * time.Millisecond}},
	})
	if err != nil {
		panic(err)
	}
	step := func(d time.Duration) { _ = e.RunUntil(e.Now().Add(d)) }
	step(time.Second)
	_ = e.AppCall(1, SendTo{To: 2, N: 1}) // opens the connection n1–n2
	step(time.Second)
	_ = e.Reset(2, true) // silent: n1 is not told
	step(time.Second)
	_ = e.AppCall(1, SendTo{To: 2, N: 1}) // dropped: the connection is stale
	step(time.Second)
	n1 := e.Core(1).Service().(*tsvc)
	fmt.Println("n1 transport errors:", n1.Errors, "after", time.Duration(n1.ErrorAt[0])-3*time.Second)
	r := e.Result()
	fmt.Println("sent", r.Messages.Sent, "delivered", r.Messages.Delivered, "dropped", r.Messages.Dropped)
	// Output:
	// n1 transport errors: [n2] after 20ms
	// sent 2 delivered 1 dropped 1
}
