package bullet

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"

	"github.com/seed6eee2ec7/crystalball/node"
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

// stateOf returns id's Bullet′ state in v, or nil when v does not hold it.
func stateOf(v node.View, id node.ID) *State {
	s, _ := v.Service(id).(*State)
	return s
}

// violations accumulates the messages of a failing check, separated by
// "; ", the first maxViolations of them (the rest only counted). Its zero
// value holds nothing, so a check that passes allocates nothing. The
// messages are appended, not formatted, and bounded: in the paper's code a
// lost block stays lost, so the emulator, which checks every step, builds
// the message of a violated state hundreds of thousands of times.
type violations struct {
	b    []byte
	n    int // violations found
	more int // violations past maxViolations, not described
}

// maxViolations is how many violations a message describes.
const maxViolations = 4

// next starts a new violation and reports whether to describe it.
func (vs *violations) next() bool {
	vs.n++
	if vs.n > maxViolations {
		vs.more++
		return false
	}
	if len(vs.b) > 0 {
		vs.b = append(vs.b, "; "...)
	}
	return true
}

func (vs *violations) add(format string, args ...any) {
	if vs.next() {
		vs.b = fmt.Appendf(vs.b, format, args...)
	}
}

func (vs *violations) id(id node.ID) { vs.b = strconv.AppendUint(append(vs.b, 'n'), uint64(id), 10) }

// lost appends "S -> R: N blocks (the first B) are neither announced to R
// nor in S's shadow for R".
func (vs *violations) lost(s, r node.ID, n, first int) {
	if !vs.next() {
		return
	}
	vs.id(s)
	vs.b = append(vs.b, " -> "...)
	vs.id(r)
	vs.b = append(strconv.AppendInt(append(vs.b, ": "...), int64(n), 10), " blocks (the first "...)
	vs.b = append(strconv.AppendInt(vs.b, int64(first), 10), ") are neither announced to "...)
	vs.id(r)
	vs.b = append(vs.b, " nor in "...)
	vs.id(s)
	vs.b = append(vs.b, "'s shadow for "...)
	vs.id(r)
}

func (vs violations) err() error {
	if vs.n == 0 {
		return nil
	}
	if vs.more > 0 {
		vs.b = fmt.Appendf(vs.b, "; and %d more", vs.more)
	}
	return errors.New(string(vs.b))
}

func checkFileMapViewConsistent(v node.View) error {
	var vs violations
	for _, sid := range v.Nodes() {
		ss := stateOf(v, sid)
		if ss == nil {
			continue
		}
		for k := range ss.Receivers {
			rl := &ss.Receivers[k]
			if len(rl.Shadow) != len(ss.Have) || len(rl.Told) != len(ss.Have) {
				vs.add("%v -> %v: file maps of different sizes", sid, rl.ID)
				continue
			}
			checkAnnounced(&vs, sid, ss.Have, rl)
			rs := stateOf(v, rl.ID)
			if rs == nil {
				continue
			}
			i := rs.senderIndex(sid)
			if i < 0 || !rs.Senders[i].Accepted || rs.Senders[i].Received != rl.Sent {
				continue
			}
			if !slices.Equal(rs.Senders[i].View, rl.Told) {
				vs.add("%v -> %v: %v's view of %v's file map is not what %v announced", sid, rl.ID, rl.ID, sid, sid)
			}
		}
	}
	return vs.err()
}

// checkAnnounced reports the blocks of sender sid's file map have that are
// neither announced to receiver rl nor in sid's shadow for it. A violation
// names how many blocks and the first, not the list: the emulator checks
// every step, and in the paper's code a lost block stays lost.
func checkAnnounced(vs *violations, sid node.ID, have []uint64, rl *ReceiverLink) {
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
		vs.lost(sid, rl.ID, lost, first)
	}
}

func checkAllBlocks(v node.View) error {
	var vs violations
	for _, id := range v.Nodes() {
		s := stateOf(v, id)
		switch {
		case s == nil:
		case !s.started():
			vs.add("%v: not started", id)
		case !s.Complete():
			vs.add("%v: %d/%d blocks", id, count(s.Have), s.opts.Blocks)
		}
	}
	return vs.err()
}
