package papers

import (
	"flag"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"github.com/seed6eee2ec7/crystalball/consequence/twophase"
)

// twoPhaseModel is check --model 2pc: the two-phase commit model of
// consequence/twophase (the SPIN comparison's, bench/spin) with --rms
// resource managers and a transaction manager.
func twoPhaseModel() tool.Model {
	return tool.Model{Name: "2pc", Flags: func(fs *flag.FlagSet) func(bool) (*tool.ModelSearch, error) {
		rms := fs.Int("rms", 3, fmt.Sprintf("resource managers of the 2pc model (1..%d)", twophase.MaxRMs))
		return func(symmetry bool) (*tool.ModelSearch, error) {
			if *rms < 1 || *rms > twophase.MaxRMs {
				return nil, fmt.Errorf("--rms must be in 1..%d, got %d", twophase.MaxRMs, *rms)
			}
			m, err := twophase.New(twophase.Options{RMs: *rms, Symmetry: symmetry})
			if err != nil {
				return nil, err
			}
			options := fmt.Sprintf("rms=%d", *rms)
			if symmetry {
				options += ",symmetry"
			}
			return tool.NewModelSearch(m, m.Properties(), *rms+1, options), nil
		}
	}}
}
