package viewstate

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
)

// service is a node.Service that does nothing.
type service struct{}

func (service) Init(node.Env)                                 {}
func (service) HandleMessage(node.Env, node.ID, node.Message) {}
func (service) HandleTimer(node.Env, string)                  {}
func (service) HandleApp(node.Env, node.Message)              {}
func (service) HandleTransportError(node.Env, node.ID)        {}

type state struct {
	service
	x int
}

type other struct{ service }

type view map[node.ID]node.Service

func (v view) Nodes() []node.ID                    { return nil }
func (v view) TimerScheduled(node.ID, string) bool { return false }
func (v view) Service(id node.ID) node.Service     { return v[id] }

func TestOf(t *testing.T) {
	s := &state{x: 1}
	v := view{1: s, 2: &other{}}
	if got := Of[*state](v, 1); got != s {
		t.Errorf("n1: %v", got)
	}
	if got := Of[*state](v, 2); got != nil {
		t.Errorf("n2, another service: %v", got)
	}
	if got := Of[*state](v, 3); got != nil {
		t.Errorf("n3, not in the view: %v", got)
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = Of[*state](v, 1) }); allocs != 0 {
		t.Errorf("Of allocates %v times", allocs)
	}
}
