package main

import "fmt"

// survivedLine is the line a service's run ends with; the values learned
// are Paxos's (a service that learns no value says nothing of them).
func survivedLine(svc string, out outcome, learns bool) string {
	values := ""
	if learns {
		values = fmt.Sprintf(", values learned %q", out.Values)
	}
	return fmt.Sprintf("%s: %d cycles survived (%d kill-all, %d kill-some), %d kills, %d settles, %d states observed%s: %s",
		svc, out.Cycles, out.KillAll, out.KillSome, out.Kills, out.Settled, out.Observed, values, out.Summary)
}
