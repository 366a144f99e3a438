package tool_test

import (
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"github.com/seed6eee2ec7/crystalball/cli/papers"
)

// The package's tests run the papers' services (cli/papers), which import
// the package: only an external test file can import them.
func init() { tool.SetTestProgram(papers.Internal()) }
