package papers

import (
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/bullet"
)

// bulletName is Bullet′'s service name, for BuiltinServices.
const bulletName = bullet.Name

// buildBullet configures Bullet′ as the paper's experiments run it: node 1
// is the source of a 20 MB file (1280 blocks of 16 KiB) and every other
// node downloads it when it starts and again after every restart (a
// restarted source serves the whole file again). --fix keep-shadow (or
// all) applies the correction of the refused-diff bug. A live node
// downloads from the first node behind --join; a node started without
// --join is the source.
func buildBullet(fixes []string, nodes int) (tool.Service, error) {
	opts := bullet.DefaultOptions()
	for _, f := range fixes {
		if err := opts.EnableFix(f); err != nil {
			return tool.Service{}, err
		}
	}
	const source node.ID = 1
	return tool.Service{
		Name: bullet.Name,
		Spec: bullet.NewSpec(opts),
		Workload: func(id node.ID, restart bool) []node.Message {
			return []node.Message{bullet.Download{Source: source}}
		},
		Join: func(self node.ID, targets []node.ID) []node.Message {
			if len(targets) == 0 {
				return []node.Message{bullet.Download{Source: self}}
			}
			return []node.Message{bullet.Download{Source: targets[0]}}
		},
		Summarize: func(v node.View) []tool.Figure {
			s := bullet.Summarize(v)
			return []tool.Figure{
				{Name: "complete", Value: s.Complete},
				{Name: "blocks_held", Value: s.Held},
				{Name: "min_blocks", Value: s.MinBlocks},
				{Name: "sender_links", Value: s.Senders},
				{Name: "longest_download_ms", Value: int(s.MaxDownload.Milliseconds())},
			}
		},
		Describe: func(v node.View) string { return bullet.Summarize(v).String() },
		Options:  opts.String(),
	}, nil
}

// bulletFixes is bullet's corrections, for BuiltinServices.
func bulletFixes() []string { return bullet.FixNames() }
