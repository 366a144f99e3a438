package macetransport

import (
	"fmt"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Options configure a MaceTransport node. The zero value of each parameter
// means its default; a negative value is an error (NewSpec and Validate
// reject it). DefaultOptions is the transport as MaceMC found it, with the
// stale-SYN bug, and Fixed applies the paper's correction.
type Options struct {
	// RetransmitTimeout is how long a sender waits for an ACK before it
	// retransmits the oldest unacknowledged packet of a connection.
	// Default 1s.
	RetransmitTimeout time.Duration
	// MaxRetries is how many consecutive retransmission timeouts without
	// any ACK from the peer a connection survives: the next timeout closes
	// it and reports an error to the application, which resends what was
	// not acknowledged on a new connection. Default 2.
	MaxRetries int
	// AppInterval, when positive, makes the test application keep sending:
	// after a SendMessages call the node sends one more message to the same
	// peer every AppInterval (emulation runs use it so that a long run has
	// traffic in flight). Default 0: off, the application sends only what
	// it is asked to.
	AppInterval time.Duration
	// DeliveredLog is how many of the latest deliveries a receiver keeps per
	// incoming connection for the safety properties to judge (in-order, no
	// duplicate). Default 16.
	DeliveredLog int

	// FixMonotoneSYN corrects the bug (MaceMC §5, Figure 4): a SYN carries
	// a monotonically increasing connection identifier (MaceMC's
	// MonotoneTime: max(Env.Now in nanoseconds, the last identifier + 1)),
	// and a receiver ignores a SYN older than its current connection's.
	FixMonotoneSYN bool
}

// Defaults for the zero-valued fields of Options.
const (
	DefaultRetransmitTimeout = time.Second
	DefaultMaxRetries        = 4
	DefaultDeliveredLog      = 16
)

// DefaultOptions returns the transport as MaceMC describes it: default
// parameters, no periodic sending, and the bug present.
func DefaultOptions() Options {
	return Options{
		RetransmitTimeout: DefaultRetransmitTimeout,
		MaxRetries:        DefaultMaxRetries,
		DeliveredLog:      DefaultDeliveredLog,
	}
}

// AllFixes returns DefaultOptions with every correction applied.
func AllFixes() Options { return DefaultOptions().Fixed() }

// Fixed returns o with every correction applied, parameters unchanged.
func (o Options) Fixed() Options {
	fixes.All(&o)
	return o
}

// Validate reports a negative parameter, which has no meaning (zero is the
// default).
func (o Options) Validate() error {
	switch {
	case o.RetransmitTimeout < 0:
		return fmt.Errorf("macetransport: RetransmitTimeout is %v; want a positive duration or 0 for %v", o.RetransmitTimeout, DefaultRetransmitTimeout)
	case o.MaxRetries < 0:
		return fmt.Errorf("macetransport: MaxRetries is %d; want a positive count or 0 for %d", o.MaxRetries, DefaultMaxRetries)
	case o.AppInterval < 0:
		return fmt.Errorf("macetransport: AppInterval is %v; want a positive duration or 0 for off", o.AppInterval)
	case o.DeliveredLog < 0:
		return fmt.Errorf("macetransport: DeliveredLog is %d; want a positive count or 0 for %d", o.DeliveredLog, DefaultDeliveredLog)
	}
	return nil
}

// withDefaults replaces zero parameters by their defaults. Negative ones
// are Validate's business; here they also fall back to the defaults, so a
// node never runs with a timer that spins.
func (o Options) withDefaults() Options {
	if o.RetransmitTimeout <= 0 {
		o.RetransmitTimeout = DefaultRetransmitTimeout
	}
	if o.MaxRetries <= 0 {
		o.MaxRetries = DefaultMaxRetries
	}
	if o.AppInterval < 0 {
		o.AppInterval = 0
	}
	if o.DeliveredLog <= 0 {
		o.DeliveredLog = DefaultDeliveredLog
	}
	return o
}

// fixes are the corrections, in bug order (node.Fixes reads --fix for
// every service alike).
var fixes = node.Fixes[Options]{Service: "macetransport", List: []node.Fix[Options]{
	{Name: "monotone-syn", Field: func(o *Options) *bool { return &o.FixMonotoneSYN }},
}}

// FixNames returns the names EnableFix accepts, in bug order, without "all".
func FixNames() []string { return fixes.Names() }

// EnableFix turns on the correction called name: one of FixNames, with or
// without a "fix-" prefix, or "all". It is how command lines and test
// scripts select corrections; an unknown name is an error wrapping
// node.ErrUnknownFix.
func (o *Options) EnableFix(name string) error { return fixes.Enable(o, name) }

// Fixes returns the names of the corrections o enables, in bug order.
func (o Options) Fixes() []string { return fixes.Enabled(o) }

// String renders the options for logs and reports, e.g. "rto=1s
// max-retries=2 app-interval=0s delivered-log=16 fixes=[monotone-syn]".
func (o Options) String() string {
	return fmt.Sprintf("rto=%v max-retries=%d app-interval=%v delivered-log=%d fixes=[%s]",
		o.RetransmitTimeout, o.MaxRetries, o.AppInterval, o.DeliveredLog, strings.Join(o.Fixes(), " "))
}
