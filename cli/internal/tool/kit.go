package tool

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// The helpers below are this package's surface for the commands built on
// it inside the cli tree (cli/papers' experiments): the same flag
// conventions, progress lines and emulated runs as the built-in commands,
// so an experiment's flags read, fail and print as emulate's do. Each is a
// thin door onto the unexported code the built-in commands use.

// ProgramName is the program's name in usage text (os.Args[0]'s base name
// once Main runs).
func ProgramName() string { return programName }

// NewFlagSet returns a flag set for the subcommand name whose errors are
// usage errors, with -h printing "usage: PROGRAM synopsis", description
// and the flags.
func NewFlagSet(name, synopsis, description string, stderr io.Writer) *flag.FlagSet {
	fs := newFlagSet(name, stderr)
	setUsage(fs, synopsis, description)
	return fs
}

// ParseFlags parses args and rejects positional arguments.
func ParseFlags(fs *flag.FlagSet, args []string) error { return parseFlags(fs, args) }

// FlagGiven reports whether the flag name was given on the command line.
func FlagGiven(fs *flag.FlagSet, name string) bool { return flagSet(fs, name) }

// DurationFlag defines a duration flag whose parse error says what a
// valid duration looks like; a negative value prints as "auto".
func DurationFlag(fs *flag.FlagSet, name string, value time.Duration, usage string) *time.Duration {
	return durationFlag(fs, name, value, usage)
}

// ByteSizeVar defines a byte-size flag (4GiB, 512MB, 1000) into p.
func ByteSizeVar(fs *flag.FlagSet, p *int64, name, usage string) { fs.Var(byteSize{p}, name, usage) }

// CheckInterval checks an interval flag: 0 (off) or at least 10ms.
func CheckInterval(name string, d time.Duration) error { return checkInterval(name, d) }

// RejectNegativeAuto reports a flag whose negative default means "auto"
// given a negative value on the command line.
func RejectNegativeAuto(fs *flag.FlagSet) error { return rejectNegativeAuto(fs) }

// ParseRate parses an events-per-time rate (N/s, N/m, N/h or 0) into
// events per second.
func ParseRate(s string) (float64, error) { return parseRate(s) }

// ParseBandwidth parses a link capacity (1Mbps, 800kbps, 1000000, inet:
// the value inet) into bits per second.
func ParseBandwidth(s string, inet int64) (int64, error) { return parseBandwidth(s, inet) }

// StartCPUProfile starts a CPU profile into the file name (none when
// empty) and returns the function that stops it.
func StartCPUProfile(name string) (stop func(), err error) { return startCPUProfile(name) }

// SpeedFactor renders a run's speed against real time ("12x", "1/3x").
func SpeedFactor(x float64) string { return speedFactor(x) }

// NewProgress returns a search's progress line on w (a terminal): level
// reports each finished level, done erases the line.
func NewProgress(w io.Writer, label string) (level func(consequence.Progress), done func()) {
	p := newProgress(w, label)
	return p.level, p.close
}

// ServiceGCPercent is the collector's least target for a search of a
// service's model (SearchGCPercent).
const ServiceGCPercent = serviceGCPercent

// SearchGCPercent sets the collector's target for the search this process
// runs (unless GOGC chose one) and returns the Progress callback that
// adjusts it after each level, calling next, and the restoring function.
func SearchGCPercent(percent int, next func(consequence.Progress)) (progress func(consequence.Progress), restore func()) {
	return searchGCPercent(percent, next)
}

// WalkFlags are the steering rounds' liveness-walk flags of node and
// emulate (--walks, --walk-depth, ...), for a command of its own.
type WalkFlags struct{ w walkFlags }

// Register defines the flags on fs with steering's defaults.
func (w *WalkFlags) Register(fs *flag.FlagSet) { w.w.register(fs) }

// Validate reports the first bad value as a usage error.
func (w *WalkFlags) Validate() error { return w.w.validate() }

// Apply sets the walk budgets on c (after Validate).
func (w *WalkFlags) Apply(c *steering.Config) { w.w.apply(c) }

// RateFlags are --adaptive-weights and --gather-on-fault, for a command
// that fixes the other steering flags itself.
type RateFlags struct{ r rateFlags }

// Register defines the two flags on fs.
func (r *RateFlags) Register(fs *flag.FlagSet) { r.r.register(fs) }

// Apply sets them on c.
func (r *RateFlags) Apply(c *steering.Config) { r.r.apply(c) }

// Emulation is emulate's flags and run, for a command built on an
// emulated run (macemc-baseline): the same flags, defaults and checks.
type Emulation struct{ p emulateParams }

// NewEmulation defines emulate's flags on fs for the services of prog.
func NewEmulation(fs *flag.FlagSet, prog Program) (*Emulation, error) {
	cat, err := newCatalog(prog)
	if err != nil {
		return nil, err
	}
	e := &Emulation{p: emulateParams{services: cat}}
	e.p.register(fs)
	return e, nil
}

// Resolve checks the parsed flags and fills the values that depend on
// others (the mode's defaults).
func (e *Emulation) Resolve() error { return e.p.resolve() }

// Run runs the emulation the flags describe (after Resolve).
func (e *Emulation) Run(ctx context.Context) (EmulateOutput, error) { return runEmulation(ctx, &e.p) }

// SetService sets --service (before parsing: its default).
func (e *Emulation) SetService(name string) { e.p.service = name }

// Service returns --service and --fix.
func (e *Emulation) Service() (name, fix string) { return e.p.service, e.p.fix }

// Seed returns --seed.
func (e *Emulation) Seed() uint64 { return e.p.seed }

// Mode returns --mode as given.
func (e *Emulation) Mode() string { return e.p.steer.modeName }

// Nodes returns --nodes.
func (e *Emulation) Nodes() int { return e.p.nodes }

// Duration returns --duration.
func (e *Emulation) Duration() time.Duration { return e.p.duration }

// Predictors returns the predicting nodes (after Resolve; nil: every
// node).
func (e *Emulation) Predictors() []node.ID { return e.p.predicting }

// Faults returns the faults the rounds explore along a path.
func (e *Emulation) Faults() consequence.Faults { return e.p.steer.faults.faults() }

// MaxStates returns the rounds' search budget (after Resolve).
func (e *Emulation) MaxStates() int { return e.p.steer.states }

// PredictionLog returns the rounds' distinct predictions with their paths
// (nil without a mode).
func (o *EmulateOutput) PredictionLog() *steering.PredictionLog { return o.predictionLog }
