package replayed

import "github.com/seed6eee2ec7/crystalball/node"

// Delivery returns the delivery semantics the object's library declares
// (Config.Delivery), for the service's node.Spec.Delivery: the explorer
// and the emulator then lose, duplicate and reorder its messages as the
// declaration allows, and the live runtime keeps sending them over TCP.
func (a *Adapter[O]) Delivery() node.DeliverySpec { return a.cfg.Delivery }
