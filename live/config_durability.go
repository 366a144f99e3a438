package live

import "errors"

// DurabilityConfig says where a node keeps its durable state: the
// service's durable part (node.Durable) and its durable layers'
// (layer.Durable). Its zero value means no store.
type DurabilityConfig struct {
	// DataDir, when set, is the directory of the node's store (a bbolt
	// file, StoreFile; created if need be, mode 0700): the durable state
	// is written and synced there before the messages of the step that
	// changed it leave the node, and restored from it when the node starts
	// again (layer.Pipeline.Restart). One node per directory: another
	// process's lock, or a directory initialised for another node ID,
	// service or cluster label, fails Start; so do a damaged store
	// (ErrStoreCorrupt) and, in a directory initialised before
	// (IdentityFile), a store that is missing, empty or another's
	// (ErrStoreLost; see ForgetLostStore). Zero ("") means no store: a
	// node.Durable service then needs Ephemeral.
	DataDir string
	// ForgetLostStore lets a node start with a new, empty store in a
	// DataDir whose store was lost (ErrStoreLost): the node forgets what
	// it promised — for a Paxos acceptor, the promises that keep the
	// cluster safe —, so it is for an operator who knows the loss and
	// accepts it. False (the default) refuses to start.
	ForgetLostStore bool
	// Ephemeral lets a node.Durable service run without DataDir, its
	// durable part kept in memory only: a restarted node forgets what it
	// promised (a Paxos acceptor may break a promise), which suits tests
	// and experiments, not deployments. Without it NewRuntime refuses
	// such a service (ErrDurableRequired). It must not be set with
	// DataDir or Store.
	Ephemeral bool
	// Store, when set, is the node's store instead of DataDir's (a test
	// or an embedding application's own); the runtime closes it when it
	// stops. It must not be set with DataDir. Zero (nil) means DataDir's.
	Store Store
}

// persists reports whether the node has a store.
func (d DurabilityConfig) persists() bool { return d.DataDir != "" || d.Store != nil }

// validate checks that d's fields do not contradict each other.
func (d DurabilityConfig) validate() error {
	switch {
	case d.DataDir != "" && d.Store != nil:
		return errors.New("live: RuntimeConfig.Durability.DataDir and Store both name the node's store; give one")
	case d.Ephemeral && d.persists():
		return errors.New("live: RuntimeConfig.Durability.Ephemeral contradicts DataDir or Store: a node with a store keeps its durable state")
	case d.ForgetLostStore && d.DataDir == "":
		return errors.New("live: RuntimeConfig.Durability.ForgetLostStore needs DataDir: it is about a data directory's lost store")
	}
	return nil
}
