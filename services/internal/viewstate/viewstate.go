package viewstate

import "github.com/seed6eee2ec7/crystalball/node"

// Of returns id's state in v as a P, the service's state type (a pointer,
// *State in every service of the module), or P's zero value, nil, when v
// does not hold id or holds a service of another type for it.
func Of[P node.Service](v node.View, id node.ID) P {
	s, _ := v.Service(id).(P)
	return s
}
