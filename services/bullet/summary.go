package bullet

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/viewstate"
)

// Summary is a few statistics of the download in a view, for progress
// lines and experiment tables.
type Summary struct {
	// Nodes is the number of Bullet′ nodes in the view.
	Nodes int
	// Started is how many of them started downloading (or serve the file).
	Started int
	// Complete is how many have every block.
	Complete int
	// Blocks is the number of blocks of the file (0 when no node started).
	Blocks int
	// MinBlocks is the fewest blocks a started node has.
	MinBlocks int
	// Held is the number of blocks the started nodes have, in total.
	Held int
	// Senders is the number of accepted sender links.
	Senders int
	// MaxDownload is the longest download among the complete nodes that
	// are not the source (Completed - Started).
	MaxDownload time.Duration
}

// DownloadTime returns how long the node took to download the file, from
// its Download call to its last block, and whether it has completed a
// download: false for a node still downloading, one that has not started,
// and the source, which starts with the file.
func (s *State) DownloadTime(self node.ID) (time.Duration, bool) {
	if s.Completed == 0 || s.Source == self {
		return 0, false
	}
	return time.Duration(s.Completed - s.Started), true
}

// Summarize computes the Summary of v. It allocates nothing, but walks
// every file map, so it is meant for reporting.
func Summarize(v node.View) Summary {
	var sum Summary
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s == nil {
			continue
		}
		sum.Nodes++
		if !s.started() {
			continue
		}
		n := count(s.Have)
		if sum.Started == 0 || n < sum.MinBlocks {
			sum.MinBlocks = n
		}
		sum.Started++
		sum.Blocks = s.opts.Blocks
		sum.Held += n
		if s.Completed != 0 {
			sum.Complete++
		}
		if d, ok := s.DownloadTime(id); ok && d > sum.MaxDownload {
			sum.MaxDownload = d
		}
		for _, l := range s.Senders {
			if l.Accepted {
				sum.Senders++
			}
		}
	}
	return sum
}

// String renders the summary, e.g. "complete 3/5 (longest download 1m2s),
// 4410/6400 blocks held (min 610 of 1280), 9 sender links".
func (s Summary) String() string {
	return fmt.Sprintf("complete %d/%d (longest download %v), %d/%d blocks held (min %d of %d), %d sender links",
		s.Complete, s.Nodes, s.MaxDownload, s.Held, s.Started*s.Blocks, s.MinBlocks, s.Blocks, s.Senders)
}
