package node

import (
	"errors"
	"slices"
	"testing"
)

type fixOpts struct{ A, B bool }

var testFixes = Fixes[fixOpts]{Service: "svc", List: []Fix[fixOpts]{
	{Name: "first", Field: func(o *fixOpts) *bool { return &o.A }},
	{Name: "second", Field: func(o *fixOpts) *bool { return &o.B }},
}}

func TestFixesEnable(t *testing.T) {
	var o fixOpts
	if err := testFixes.Enable(&o, "fix-second"); err != nil || o != (fixOpts{B: true}) {
		t.Fatalf("fix-second: %+v, %v", o, err)
	}
	if got := testFixes.Enabled(o); !slices.Equal(got, []string{"second"}) {
		t.Errorf("Enabled = %v", got)
	}
	o = fixOpts{}
	if err := testFixes.Enable(&o, "all"); err != nil || o != (fixOpts{true, true}) {
		t.Fatalf("all: %+v, %v", o, err)
	}
	if got := testFixes.Enabled(fixOpts{}); got != nil {
		t.Errorf("Enabled of none = %v", got)
	}
	o = fixOpts{}
	err := testFixes.Enable(&o, "third")
	if !errors.Is(err, ErrUnknownFix) || err.Error() != `svc: unknown fix "third" (want one of first, second or all)` || o != (fixOpts{}) {
		t.Errorf("third: %+v, %v", o, err)
	}
	if got := testFixes.Names(); !slices.Equal(got, []string{"first", "second"}) {
		t.Errorf("Names = %v", got)
	}
}
