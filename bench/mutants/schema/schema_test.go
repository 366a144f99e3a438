package schema

import "testing"

func TestSwitch(t *testing.T) {
	defer func() { Active = 0 }()
	Active = 0
	if On(3) || Pick(3, "orig", "mut") != "orig" {
		t.Fatal("mutant 3 runs while none is active")
	}
	Active = 3
	if !On(3) || On(4) || Pick(3, 1, 2) != 2 || Pick(4, 1, 2) != 1 {
		t.Fatal("mutant 3 active: the switch picks the wrong code")
	}
}
