package bullet

import (
	"math/bits"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/viewstate"
	"github.com/seed6eee2ec7/crystalball/services/internal/violation"
)

// Property names.
const (
	// FileMapViewConsistent (safety, the paper's property 1 of §5.2.3:
	// "sender's file map and receiver's view of it should be identical"),
	// up to what is in flight. For every sender S and each of its
	// receivers R: every block S has was announced to R by a diff the
	// transport accepted (ReceiverLink.Told) or is in S's shadow file map
	// for R, to be announced; and when R holds S as an accepted sender and
	// has received every diff the transport accepted from S (Sent ==
	// Received: none in flight), R's view of S's file map is exactly what
	// S announced. node.View exposes node states, not channels, so the
	// sender keeps what the transport accepted (Told, a ghost of R's view)
	// and the pair counts the diffs. The first half is judged on S alone,
	// so a neighbourhood snapshot without R still shows it. The paper's
	// code violates it at the very refusal of a diff that announced a
	// block; the correction never.
	FileMapViewConsistent = "FileMapViewConsistent"

	// AllBlocks (liveness): every node in the view has started and has
	// every block of the file.
	AllBlocks = "AllBlocks"
)

// SafetyProperties returns Bullet′'s safety property.
//
// The check evaluates only the nodes the view holds (a neighbourhood
// snapshot is partial: what a sender announced is judged on the sender
// alone, the receiver's view only when both ends are in the view), does
// not allocate when the property holds, and on a violation names every
// offending pair.
func SafetyProperties() []node.Property {
	return []node.Property{node.Always(FileMapViewConsistent, checkFileMapViewConsistent)}
}

// LivenessProperties returns Bullet′'s liveness property.
func LivenessProperties() []node.Property {
	return []node.Property{node.Eventually(AllBlocks, checkAllBlocks)}
}

// Properties returns the safety then the liveness properties.
func Properties() []node.Property {
	return append(SafetyProperties(), LivenessProperties()...)
}

// maxViolations is how many violations a check's message describes, the
// rest only counted (violation.Bounded). The messages are appended, not
// formatted, and bounded: in the paper's code a lost block stays lost, so
// the emulator, which checks every step, builds the message of a violated
// state hundreds of thousands of times.
const maxViolations = 4

// appendLost describes a violation as "S -> R: N blocks (the first B)
// are neither announced to R nor in S's shadow for R", appended rather
// than formatted.
func appendLost(vs *violation.List, s, r node.ID, n, first int) {
	if !vs.Next() {
		return
	}
	vs.AppendID(s)
	vs.AppendString(" -> ")
	vs.AppendID(r)
	vs.AppendString(": ")
	vs.AppendInt(n)
	vs.AppendString(" blocks (the first ")
	vs.AppendInt(first)
	vs.AppendString(") are neither announced to ")
	vs.AppendID(r)
	vs.AppendString(" nor in ")
	vs.AppendID(s)
	vs.AppendString("'s shadow for ")
	vs.AppendID(r)
}

func checkFileMapViewConsistent(v node.View) error {
	vs := violation.Bounded(maxViolations)
	for _, sid := range v.Nodes() {
		ss := viewstate.Of[*State](v, sid)
		if ss == nil {
			continue
		}
		for k := range ss.Receivers {
			rl := &ss.Receivers[k]
			if len(rl.Shadow) != len(ss.Have) || len(rl.Told) != len(ss.Have) {
				vs.Add("%v -> %v: file maps of different sizes", sid, rl.ID)
				continue
			}
			checkAnnounced(&vs, sid, ss.Have, rl)
			rs := viewstate.Of[*State](v, rl.ID)
			if rs == nil {
				continue
			}
			i := rs.senderIndex(sid)
			if i < 0 || !rs.Senders[i].Accepted || rs.Senders[i].Received != rl.Sent {
				continue
			}
			if !slices.Equal(rs.Senders[i].View, rl.Told) {
				vs.Add("%v -> %v: %v's view of %v's file map is not what %v announced", sid, rl.ID, rl.ID, sid, sid)
			}
		}
	}
	return vs.Err()
}

// checkAnnounced reports the blocks of sender sid's file map have that are
// neither announced to receiver rl nor in sid's shadow for it. A violation
// names how many blocks and the first, not the list: the emulator checks
// every step, and in the paper's code a lost block stays lost.
func checkAnnounced(vs *violation.List, sid node.ID, have []uint64, rl *ReceiverLink) {
	lost, first := 0, -1
	for w, h := range have {
		if m := h &^ (rl.Told[w] | rl.Shadow[w]); m != 0 {
			if first < 0 {
				first = w*64 + bits.TrailingZeros64(m)
			}
			lost += bits.OnesCount64(m)
		}
	}
	if lost > 0 {
		appendLost(vs, sid, rl.ID, lost, first)
	}
}

func checkAllBlocks(v node.View) error {
	vs := violation.Bounded(maxViolations)
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		switch {
		case s == nil:
		case !s.started():
			vs.Add("%v: not started", id)
		case !s.Complete():
			vs.Add("%v: %d/%d blocks", id, count(s.Have), s.opts.Blocks)
		}
	}
	return vs.Err()
}
