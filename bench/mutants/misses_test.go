package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestMissClass(t *testing.T) {
	found := offlineResult{Found: true, Property: "P", Stop: "violations"}
	cases := []struct {
		name string
		o    outcome
		want string
	}{
		{"survivor", outcome{}, ""},
		{"crash", outcome{Killed: true, Crash: "panic"}, ""},
		{"caught", outcome{Killed: true, CaughtBeforeBite: true}, ""},
		{"at start, original's finding", outcome{Killed: true, AtStart: true, Offline: found}, "at start: " + missOriginalsFinding},
		{"at start, completed", outcome{Killed: true, AtStart: true, Offline: offlineResult{Stop: "completed"}}, "at start: " + missSearchCompleted},
		{"at start, budget", outcome{Killed: true, AtStart: true, Offline: offlineResult{Stop: "state budget"}}, "at start: " + missSearchBudget},
		{"at start, error", outcome{Killed: true, AtStart: true, Offline: offlineResult{Stop: "error: x"}}, "at start: " + missSearchError},
		{"later, late", outcome{Killed: true, Predicted: true, Offline: offlineResult{Stop: "state budget"}}, "later: " + missSearchBudget + "; " + missLate},
		{"later, unpredicted", outcome{Killed: true, Offline: offlineResult{Stop: "completed"}}, "later: " + missSearchCompleted + "; " + missUnpredicted},
	}
	for _, c := range cases {
		if got := c.o.missClass(); got != c.want {
			t.Errorf("%s: missClass = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestBoardCountsMisses(t *testing.T) {
	res := shardResult{Outcomes: []outcome{
		{Killed: true, AtStart: true, Offline: offlineResult{Stop: "completed"}},
		{Killed: true, AtStart: true, Offline: offlineResult{Stop: "completed"}},
		{Killed: true, Predicted: true, Offline: offlineResult{Stop: "state budget"}},
		{Killed: true, CaughtBeforeBite: true},
		{},
	}}
	b := tallyBoard(manifest{}, "all", []uint64{1}, res)
	if got := b.ByMiss["at start: "+missSearchCompleted]; got != 2 {
		t.Errorf("at start, completed: %d, want 2 (%v)", got, b.ByMiss)
	}
	if len(b.ByMiss) != 2 {
		t.Errorf("ByMiss = %v, want two classes", b.ByMiss)
	}
	var out bytes.Buffer
	b.table(&out)
	text := out.String()
	first := strings.Index(text, "at start: "+missSearchCompleted)
	second := strings.Index(text, "later: "+missSearchBudget)
	if first < 0 || second < first {
		t.Errorf("the miss table lists the classes most frequent first:\n%s", text)
	}
}
