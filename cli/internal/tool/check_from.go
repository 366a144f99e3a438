package tool

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// 'check --from FILE' explores from the state a prediction report (what
// --reports writes) or a /snapshot document holds, instead of the
// service's initial configuration, with every other flag as usual.

// registerFrom defines --from on fs.
func (f *checkFlags) registerFrom(fs *flag.FlagSet) {
	fs.StringVar(&f.from, "from", "", "explore from the state in this file — a prediction report (--reports) or a node's /snapshot document — instead of the initial configuration; a report's service, --fix and --nodes are the defaults of those flags")
}

// setFlags returns the names of the flags set on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return set
}

// readFrom reads --from (nil without it) and takes the service flags the
// command line leaves unset from it: a report's service, corrections and
// node count; a snapshot document's members' largest ID as the node count.
// An unreadable file, or one of another format, is a usage error.
func (f *checkFlags) readFrom() (*report.Start, error) {
	if f.from == "" {
		return nil, nil
	}
	st, err := readStartFile(f.from)
	if err != nil {
		return nil, err
	}
	f.takeStartDefaults(&st)
	return &st, nil
}

// readStartFile reads the start in the file path (--from); an unreadable
// file, or one of another format, is a usage error.
func readStartFile(path string) (report.Start, error) {
	file, err := os.Open(path)
	if err != nil {
		return report.Start{}, usagef("--from: %v", err)
	}
	defer file.Close()
	st, err := report.ReadStart(file, traceLimits)
	if err != nil {
		return report.Start{}, usagef("--from %s: %v", path, err)
	}
	return st, nil
}

// takeStartDefaults sets the service flags the command line leaves unset
// from st: its service, corrections and node count.
func (f *checkFlags) takeStartDefaults(st *report.Start) {
	if st.Service != "" && !f.set["service"] {
		f.service = st.Service
	}
	if st.Fix != "" && !f.set["fix"] {
		f.fix = st.Fix
	}
	if !f.set["nodes"] {
		f.nodes = fromStartNodes(st)
	}
}

// fromStartNodes is the node count of st: a report's, else the largest ID of
// a snapshot document's members up to maxCheckNodes (0: none).
func fromStartNodes(st *report.Start) int {
	if st.Nodes != 0 {
		return st.Nodes
	}
	n := 0
	for _, m := range st.Snapshot.Nodes {
		if int(m.ID) > n && int(m.ID) <= maxCheckNodes {
			n = int(m.ID)
		}
	}
	return n
}

// fromModel is the model of the start st for svc with faults: the
// snapshot's members and channels, the workload's restart calls, and a
// report's arrivals. A document of another service is a usage error.
func (f *checkFlags) fromModel(st *report.Start, svc serviceRun, faults consequence.Faults) (*consequence.ActorModel, error) {
	m, err := st.Model(f.service, svc.spec, steering.SnapshotOptions{Workload: svc.workload, Faults: faults, Arrivals: st.Arrivals, TimerSkew: f.lasting.skew})
	if errors.Is(err, report.ErrWrongService) || errors.Is(err, report.ErrMalformed) {
		return nil, usagef("--from %s: %v", f.from, err)
	}
	return m, err
}

// checkStart is what check's output records of a --from start, so that
// 'trace show' rebuilds the same model.
func checkStart(out *checkOutput, file string, st *report.Start) {
	out.From = file
	doc := st.Snapshot
	out.Start = &doc
	out.StartArrivals = st.Arrivals
	out.Faults += fmt.Sprintf(" from=%s", file)
}

// checkOutputModel rebuilds the model a check --json output's paths replay
// on: the start it records (--from), or the initial configuration.
func checkOutputModel(svc serviceRun, co checkOutput) (*consequence.ActorModel, error) {
	faults, err := co.Lasting.Apply(consequence.Faults{Resets: co.Resets, SilentResets: co.Silent, Breaks: co.Breaks, Drops: co.Drops, Refusals: co.Refusals,
		Losses: co.Losses, Duplicates: co.Duplicates, Reorders: co.Reorders, Delays: co.Delays})
	if err != nil {
		return nil, usageError{err}
	}
	if co.Start == nil {
		return serviceModelSkewed(svc, co.Nodes, co.Seed, faults, co.Lasting.Skew())
	}
	if err := co.Start.Validate(); err != nil {
		return nil, usageError{err}
	}
	st := report.Start{Format: report.SnapshotFormat, Snapshot: *co.Start, Arrivals: co.StartArrivals}
	return st.Model(co.Target, svc.spec, steering.SnapshotOptions{Workload: svc.workload, Faults: faults, Arrivals: co.StartArrivals, TimerSkew: co.Lasting.Skew()})
}
