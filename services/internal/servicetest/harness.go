package servicetest

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// SummaryCommand is the script command "summary" of a service whose
// Summarize reads a view: it prints summarize of the harness's started
// nodes on one line. An argument is an error, "SERVICE: usage: summary".
func SummaryCommand[S fmt.Stringer](service string, summarize func(node.View) S) nodetest.Command {
	return func(h *nodetest.Harness, args []string, out io.Writer) error {
		if len(args) != 0 {
			return errors.New(service + ": usage: summary")
		}
		_, err := fmt.Fprintln(out, summarize(h))
		return err
	}
}

// PeerCall is a nodetest.Config.App for a service whose application call
// names one other node: the script line "app ID VERB PEER" runs
// call(PEER). Other arguments are an error, "SERVICE: usage: app ID VERB
// ARG", and so is a PEER that is not a node ID.
func PeerCall(service, verb, arg string, call func(peer node.ID) node.Message) func(node.ID, []string) (node.Message, error) {
	usage := service + ": usage: app ID " + verb + " " + arg
	return func(_ node.ID, args []string) (node.Message, error) {
		if len(args) != 2 || args[0] != verb {
			return nil, errors.New(usage)
		}
		peer, err := node.ParseID(args[1])
		if err != nil {
			return nil, err
		}
		return call(peer), nil
	}
}

// ConformanceSeeds is how many seeds Conformance runs each spec with:
// 0, 1 and 2.
const ConformanceSeeds = 3

// ConformanceNodes is how many nodes each of Conformance's runs has.
const ConformanceNodes = 4

// Conformance holds each spec — a service with one set of options, under
// its name — to the contracts every runtime relies on
// (nodetest.Conformance: clone independence, checkpoint round trip, hash
// coverage, message registration), in a subtest per name, on
// ConformanceNodes nodes that start with the application calls calls
// returns, with seeds 0 to ConformanceSeeds-1.
func Conformance(t *testing.T, specs map[string]node.Spec, calls func(self node.ID, nodes []node.ID) []node.Message) {
	t.Helper()
	opt := nodetest.ConformanceCalls(calls)
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			for seed := range uint64(ConformanceSeeds) {
				nodetest.Conformance(t, spec, opt, nodetest.ConformanceNodes(ConformanceNodes), nodetest.ConformanceSeed(seed))
			}
		})
	}
}
