package webview_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/webview"
)

func TestGraphSVGDrawsStepsEdgesAndTheCriticalStep(t *testing.T) {
	var a, b bytes.Buffer
	if err := webview.WriteGraphSVG(&a, fakeTrace{}.Info()); err != nil {
		t.Fatal(err)
	}
	webview.WriteGraphSVG(&b, fakeTrace{}.Info())
	if a.String() != b.String() {
		t.Error("two drawings of one graph differ")
	}
	svg := a.String()
	if n := strings.Count(svg, `class="step"`); n != 3 {
		t.Errorf("%d steps drawn, want 3", n)
	}
	if n := strings.Count(svg, `class="edge"`); n != 2 {
		t.Errorf("%d edges drawn, want 2", n)
	}
	for _, want := range []string{
		`r="7" fill="#d00"/><text x="230" y="88">2. n2 deliver Join from n1  ← critical transition</text>`,
		"3. n1 timer &lt;retry&gt;",                             // escaped
		`<path class="edge" d="M85 62L175 79" stroke="#0072b2"`, // step 1 on n1's lane to step 2 on n2's
		`<path class="edge" d="M85 40L85 101" stroke="#e69f00"`, // from the start, down n1's lane
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("the graph lacks %q:\n%s", want, svg)
		}
	}
}

func TestGraphSVGStopsAtMaxGraphSteps(t *testing.T) {
	info := webview.TraceInfo{Nodes: []string{"n1"}, Steps: make([]webview.Step, webview.MaxGraphSteps+5)}
	for i := range info.Steps {
		info.Steps[i] = webview.Step{Text: "s", Node: "n1"}
	}
	var b bytes.Buffer
	webview.WriteGraphSVG(&b, info)
	if n := strings.Count(b.String(), `class="step"`); n != webview.MaxGraphSteps || !strings.Contains(b.String(), "… 5 more steps not drawn") {
		t.Errorf("%d steps drawn, want %d and the rest counted", n, webview.MaxGraphSteps)
	}
}
