package commit

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// agreementAtomic: the nodes that know a transaction's outcome know the
// same one, and no participant commits a transaction the coordinator has
// not decided to commit.
func agreementAtomic(v node.View) error {
	coord, _ := v.Service(Coordinator).(*State)
	ids := v.Nodes()
	for i, a := range ids {
		sa, ok := v.Service(a).(*State)
		if !ok {
			continue
		}
		for _, o := range sa.Log {
			for _, b := range ids[i+1:] {
				if sb, ok := v.Service(b).(*State); ok {
					if ob, known := sb.outcome(o.Txn); known && ob.Commit != o.Commit {
						return fmt.Errorf("txn %d: %v decided %s, %v decided %s", o.Txn, a, verdict(o.Commit), b, verdict(ob.Commit))
					}
				}
			}
			if a != Coordinator && o.Commit && coord != nil {
				if err := coord.allowsCommit(o.Txn); err != nil {
					return fmt.Errorf("txn %d: %v committed, but %w", o.Txn, a, err)
				}
			}
		}
	}
	return nil
}

// allowsCommit says whether the coordinator's state allows a participant
// to have committed txn: it began it and decided to commit it (or the
// decision is older than its log).
func (s *State) allowsCommit(txn uint64) error {
	switch o, known := s.outcome(txn); {
	case txn > s.Txn:
		return fmt.Errorf("the coordinator has not begun it (at txn %d)", s.Txn)
	case txn == s.Txn && s.Phase == Voting:
		return fmt.Errorf("the coordinator has not decided it")
	case known && !o.Commit:
		return fmt.Errorf("the coordinator aborted it")
	}
	return nil
}

// noTxnInDoubt: no participant has voted yes on a transaction whose
// outcome it does not know.
func noTxnInDoubt(v node.View) error {
	for _, id := range v.Nodes() {
		if s, ok := v.Service(id).(*State); ok && s.Prepared != 0 {
			return fmt.Errorf("%v is in doubt about txn %d", id, s.Prepared)
		}
	}
	return nil
}
