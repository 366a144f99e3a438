package consequence_test

import (
	"context"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// Token passes the token to its receiver.
type Token struct{}

// MessageType names Token on the wire.
func (Token) MessageType() string { return "token.Token" }

// tokenRing is a two-node token passer with a bug: node 1 starts with the
// token and, when its timer "pass" fires, sends it to node 2 but forgets
// to give it up.
type tokenRing struct {
	HasToken bool
}

func (s *tokenRing) Init(env node.Env) {
	if env.Self() == 1 {
		s.HasToken = true
		env.SetTimer("pass", time.Second)
	}
}

func (s *tokenRing) HandleTimer(env node.Env, name string) {
	env.Send(2, Token{}) // bug: s.HasToken stays true
}

func (s *tokenRing) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	s.HasToken = true
}

func (s *tokenRing) HandleApp(node.Env, node.Message)       {}
func (s *tokenRing) HandleTransportError(node.Env, node.ID) {}

// oneHolder is the safety property: at most one node holds the token.
func oneHolder(v node.View) error {
	var holders []node.ID
	for _, id := range v.Nodes() {
		if s, ok := v.Service(id).(*tokenRing); ok && s.HasToken {
			holders = append(holders, id)
		}
	}
	if len(holders) > 1 {
		return fmt.Errorf("%v all hold the token", holders)
	}
	return nil
}

// Checking a tiny service offline: build the actor model of its initial
// configuration, search it, and print the violation with the path that
// reaches it.
func Example() {
	spec := node.Spec{
		Name:       "token",
		New:        func() node.Service { return &tokenRing{} },
		Messages:   []node.Message{Token{}},
		Properties: []node.Property{node.Always("one-holder", oneHolder)},
	}
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := consequence.NewChecker(m).
		Properties(m.Properties()...).
		Strategy(consequence.Consequence).
		MaxDepth(10).
		Run(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Stop, res.Unique, "states")
	for _, v := range res.Violations {
		fmt.Println(v)
		for i, step := range v.Path {
			fmt.Printf("  %d. %v\n", i+1, step)
		}
	}
	// Output:
	// completed 3 states
	// safety "one-holder" violated at depth 2: [n1 n2] all hold the token [path: n1 timer pass; n2 deliver token.Token from n1]
	//   1. n1 timer pass
	//   2. n2 deliver token.Token from n1
}
