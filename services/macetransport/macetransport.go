package macetransport

import (
	"log/slog"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
)

// HandleMessage implements node.Service: packets to the receiving end,
// ACKs to the sending end. Anything else is logged and dropped.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch m := msg.(type) {
	case Data:
		s.receive(env, from, m)
	case Ack:
		s.acked(env, from, m)
	default:
		env.Logger().Warn("macetransport: unexpected message", slog.Any("from", from), slog.String("type", msg.MessageType()))
	}
}

// HandleTimer implements node.Service.
func (s *State) HandleTimer(env node.Env, name string) {
	if name == TimerApp {
		s.appTick(env)
		return
	}
	if p, ok := strings.CutPrefix(name, TimerRetransmitPrefix); ok {
		if peer, err := node.ParseID(p); err == nil {
			s.timeout(env, peer)
			return
		}
	}
	env.Logger().Warn("macetransport: unknown timer", slog.String("timer", name))
}

// HandleApp implements node.Service: the test application's SendMessages.
func (s *State) HandleApp(env node.Env, call node.Message) {
	m, ok := call.(SendMessages)
	if !ok {
		env.Logger().Warn("macetransport: unexpected application call", slog.String("type", call.MessageType()))
		return
	}
	if m.To == node.None || m.To == env.Self() || m.Count < 1 || m.Count > MaxSendCount {
		env.Logger().Warn("macetransport: SendMessages ignored: want another node and a count in 1..MaxSendCount",
			slog.Any("to", m.To), slog.Int("count", m.Count))
		return
	}
	for range m.Count {
		s.sendMessage(env, m.To)
	}
	if s.opts.AppInterval > 0 {
		s.AppPeer = m.To
		if !env.TimerScheduled(TimerApp) {
			env.SetTimer(TimerApp, s.opts.AppInterval)
		}
	}
}

// appTick is the periodic application send (Options.AppInterval).
func (s *State) appTick(env node.Env) {
	if s.AppPeer == node.None || s.opts.AppInterval <= 0 {
		return
	}
	s.sendMessage(env, s.AppPeer)
	env.SetTimer(TimerApp, s.opts.AppInterval)
}

// retransmitTimer names the retransmission timer of the connection to peer.
func retransmitTimer(peer node.ID) string {
	return TimerRetransmitPrefix + peer.String()
}
