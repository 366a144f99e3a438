// Command newcomer runs the services of package newcomer — a permit
// limiter, a two-phase commit and Ricart–Agrawala mutual exclusion,
// written the way a new user writes one from the README — through the
// crystalball command line, --service selecting one:
//
//	go run ./examples/newcomer/cmd/newcomer check --service permits --nodes 3 --breaks 1 --max-depth 8
//	go run ./examples/newcomer/cmd/newcomer emulate --service permits --nodes 3 --duration 10m --breaks 2/m --immediate
//
// --fix all runs a service's corrected twin.
package main

import (
	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/examples/newcomer"
)

func main() { cli.Program{Services: newcomer.Services()}.Main() }
