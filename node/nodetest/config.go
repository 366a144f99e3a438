package nodetest

import (
	"io"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Config tells a Harness what is specific to the service under test. Only
// Spec is required; the zero value of every other field means its
// documented default (DefaultConfig). The hooks are plain closures: a
// service that has options keeps them in a variable that Options writes and
// Spec reads, and builds a fresh Config (so fresh options) for every
// script.
type Config struct {
	// Spec returns the service to run. The harness calls it once, at the
	// first start or check, after every options command, and validates the
	// result.
	Spec func() node.Spec
	// Seed seeds every node's random source unless the script sets seed=N;
	// zero is a seed like any other.
	Seed uint64
	// Options applies the options command's arguments other than seed=N
	// (e.g. "fix-update-sibling", "max-children=2") and returns the line to
	// print, typically the resulting options; an empty answer prints "ok".
	// Nil: the options command accepts only seed=N.
	Options func(args []string) (string, error)
	// App builds the application call that the command "app ID ARG..."
	// runs at id from ARG... (e.g. randtree's "join n13"). Nil: the service
	// has no application calls and the app command fails.
	App func(id node.ID, args []string) (node.Message, error)
	// Describe renders a node's service state for the state command. Nil:
	// fmt.Sprint of the service.
	Describe func(svc node.Service) string
	// Commands are the service's own script commands, by name. A name may
	// not shadow a built-in command.
	Commands map[string]Command
	// DeliverAllLimit bounds the deliveries of one deliver-all, so a
	// protocol that never quiesces fails the script instead of hanging it.
	// Zero means DefaultDeliverAllLimit; negative is an error.
	DeliverAllLimit int
}

// DefaultDeliverAllLimit is the deliver-all bound when Config leaves it zero.
const DefaultDeliverAllLimit = 1000

// DefaultConfig returns what a Config's optional fields stand for when
// zero: seed 0, no options, application calls or service commands, states
// described with fmt.Sprint, and DefaultDeliverAllLimit. Spec, which has
// no default, is left for the caller to set.
func DefaultConfig() Config { return Config{DeliverAllLimit: DefaultDeliverAllLimit} }

// Command runs a service-specific script command with its arguments (each
// as datadriven prints it: "key", "key=val" or "key=(v1, v2)"). It acts on
// the nodes through h.Step, so sends are queued and effects printed like
// the built-in commands', and writes its output to out; writing nothing
// prints "ok". An error fails the test.
type Command func(h *Harness, args []string, out io.Writer) error
