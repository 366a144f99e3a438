package layer

// Durable is a Layer whose state must survive a crash (steering's installed filters and holds).
type Durable interface {
	Layer
	// DurableKey names the layer's record in the node's store; unique per pipeline (NewPipeline checks).
	DurableKey() string
	// DurableState returns the layer's durable state, encoded, and whether it changed since the last call
	// (the pipeline asks after every hook call that may change it: Start, Before/Gate, After, Tick; cheap when unchanged).
	DurableState() (data []byte, changed bool)
	// RestoreDurable gives the layer back the last state it made durable, before the node handles its first event
	// after a restart (live) or right after an EventReset has gone through the layers (emulation, where the layer
	// object survives the reset): the pipeline keeps the last bytes it emitted and restores them itself, so both
	// shells get the same rule in one place. An error is logged by the shell and the layer starts empty.
	RestoreDurable(data []byte) error
}
