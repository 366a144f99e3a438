package node

import (
	"errors"
	"testing"
)

// TestCheckMessage pins the one rule for messages outside Spec.Messages:
// each error wraps ErrUnknownMessageType and says what is wrong.
func TestCheckMessage(t *testing.T) {
	r := testRegistry(t)
	if err := r.CheckMessage(joinMsg{Joiner: 3}); err != nil {
		t.Fatalf("registered message: %v", err)
	}
	cases := []struct {
		name string
		msg  Message
		want string
	}{
		{"unregistered", unregistered{}, `node: unknown message type: "test.unregistered" (node.unregistered) is not in Spec.Messages`},
		{"pointer", &joinMsg{}, `node: unknown message type: "test.join" is registered as node.joinMsg, not *node.joinMsg (register a struct value, not a pointer)`},
		{"nil", nil, "node: unknown message type: nil message"},
	}
	for _, tc := range cases {
		err := r.CheckMessage(tc.msg)
		if !errors.Is(err, ErrUnknownMessageType) || err.Error() != tc.want {
			t.Errorf("%s: CheckMessage = %v, want %s", tc.name, err, tc.want)
		}
		// Encoding applies the same rule with the same words.
		if _, err := r.EncodeMessage(tc.msg); tc.msg != nil && (err == nil || err.Error() != tc.want) {
			t.Errorf("%s: EncodeMessage = %v, want %s", tc.name, err, tc.want)
		}
	}
}

func TestCheckSends(t *testing.T) {
	r := testRegistry(t)
	ok := []Envelope{{From: 1, To: 2, Msg: joinMsg{}}, {From: 1, To: 3, Msg: note{}, Datagram: true}}
	if err := r.CheckSends(ok); err != nil {
		t.Fatalf("registered sends: %v", err)
	}
	if err := r.CheckSends(nil); err != nil {
		t.Fatalf("no sends: %v", err)
	}
	bad := append(ok, Envelope{From: 1, To: 4, Msg: unregistered{}}, Envelope{From: 1, To: 5, Msg: &note{}})
	err := r.CheckSends(bad)
	want := `node: n1 sent to n4: node: unknown message type: "test.unregistered" (node.unregistered) is not in Spec.Messages`
	if !errors.Is(err, ErrUnknownMessageType) || err.Error() != want {
		t.Errorf("CheckSends = %v, want the first bad send: %s", err, want)
	}
}
