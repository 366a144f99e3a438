package tool

import (
	"strings"
	"testing"
)

// --graph svg draws the event graph with nothing but this program (dot
// needs Graphviz).
func TestTraceGraphSVGNeedsNoOtherProgram(t *testing.T) {
	file, _ := walkReport(t)
	code, svg, stderr := runCLI("trace", "show", file, "--graph", "svg")
	if code != exitOK || !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, "</svg>") {
		t.Fatalf("exit %d: %s\n%.200s", code, stderr, svg)
	}
}
