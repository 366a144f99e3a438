package snapshot_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// FuzzPeerNumbers feeds a node arbitrary checkpoint numbers from peers (in
// service messages, Requests and Negatives, 10 bytes a message: peer, kind,
// number) between ticks and gathers. Whatever they are, the number never
// passes MaxCN, never jumps beyond the window except on a counted catch-up
// (which takes two distinct peers), and no sent number or cut passes MaxCN.
func FuzzPeerNumbers(f *testing.F) {
	rec := func(peer, kind byte, cn uint64) []byte {
		return binary.BigEndian.AppendUint64([]byte{peer, kind}, cn)
	}
	f.Add(rec(2, 0, 1<<62))
	f.Add(append(rec(2, 0, 1<<62), rec(3, 0, 1<<62-1)...))
	f.Add(append(rec(2, 1, 5000), rec(3, 2, ^uint64(0))...))
	f.Add(append(append(rec(2, 0, 500), rec(3, 0, 700)...), rec(2, 3, 0)...))
	const window = 100
	f.Fuzz(func(t *testing.T, data []byte) {
		h := newHarness(t, []node.ID{1, 2, 3}, func(node.ID) snapshot.Config {
			return snapshot.Config{Interval: time.Second, GatherConfig: snapshot.GatherConfig{GatherInterval: 3 * time.Second}, LimitsConfig: snapshot.LimitsConfig{CNWindow: window}}
		})
		m := h.mgrs[1]
		claimed := map[node.ID]bool{}
		for len(data) >= 10 {
			peer, kind, cn := node.ID(data[0]%4+2), data[1]%4, binary.BigEndian.Uint64(data[2:10])
			data = data[10:]
			var msg node.Message = ping{}
			switch kind {
			case 1:
				msg = snapshot.Request{Gather: 1, CR: cn, Members: []node.ID{1, peer}}
			case 2:
				msg = snapshot.Negative{Gather: 1, CR: 1, CN: cn, Reason: snapshot.ReasonPruned}
			case 3:
				h.tick(time.Second)
				continue
			}
			before, caught := m.CN(), m.Stats().CNCaughtUp
			if cn > before+window {
				claimed[peer] = true
			}
			_, fx, err := m.Deliver(h.now, node.Envelope{From: peer, To: 1, CN: cn, Msg: msg})
			if err != nil {
				t.Fatal(err)
			}
			st := m.Stats()
			if st.CN > snapshot.MaxCN {
				t.Fatalf("cn %d past MaxCN", st.CN)
			}
			if st.CN > before+window && (st.CNCaughtUp == caught || len(claimed) < 2) {
				t.Fatalf("cn jumped from %d to %d on one peer's number %d", before, st.CN, cn)
			}
			for _, env := range fx.Sends {
				if r, ok := env.Msg.(snapshot.Request); env.CN > snapshot.MaxCN || ok && r.CR > snapshot.MaxCN {
					t.Fatalf("sent %+v past MaxCN", env)
				}
			}
		}
		if _, err := m.Gather(h.now); err != nil && err != snapshot.ErrGatherInProgress {
			t.Fatal(err)
		}
		h.tick(snapshot.DefaultGatherTimeout)
		if next := m.NextTick(); next.Before(h.now) {
			t.Fatalf("NextTick %v overdue at %v", next, h.now)
		}
	})
}
