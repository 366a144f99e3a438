package node

// NopHandlers is a no-op base a Service embeds so that it writes only the
// handlers it needs: Init, HandleMessage, HandleTimer, HandleApp and
// HandleTransportError each do nothing here, and the service's own method
// of the same name takes precedence.
//
// It is an empty struct: embedding it adds no state, and an embedded empty
// struct encodes to nothing (msgpack inlines an embedded struct's fields),
// so a service's checkpoint, fingerprint and wire bytes are the same with
// it as with the empty methods it replaces. It is stateless, so safe for
// concurrent use, and deterministic.
//
// A service that embeds it and forgets to write HandleMessage ignores
// every message; Conformance in package nodetest still checks the rest.
type NopHandlers struct{}

// Init does nothing.
func (NopHandlers) Init(Env) {}

// HandleMessage ignores msg.
func (NopHandlers) HandleMessage(Env, ID, Message) {}

// HandleTimer ignores the expiry.
func (NopHandlers) HandleTimer(Env, string) {}

// HandleApp ignores call.
func (NopHandlers) HandleApp(Env, Message) {}

// HandleTransportError ignores the broken connection.
func (NopHandlers) HandleTransportError(Env, ID) {}
