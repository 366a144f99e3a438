package linearizable

import (
	"bytes"
	"errors"
	"io"

	"github.com/anishathalye/porcupine"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Visualize writes porcupine's visualisation of h against m to w: a
// self-contained HTML page with a row per client node, each operation as
// a bar from its invocation to its response (positions in the history),
// and the longest linearizable prefixes porcupine found — where a history
// that is not linearizable stops being explainable. Operations without a
// response reach past the history's end.
func Visualize(w io.Writer, h node.History, m Model) error {
	if m.Init == nil || m.Step == nil {
		return errors.New("linearizable: Model needs Init and Step")
	}
	parts, err := partition(h, m)
	if err != nil {
		return err
	}
	var ops []porcupine.Operation
	for _, p := range parts {
		ops = append(ops, p.ops...)
	}
	pm := m.porcupine(h.Start)
	if h.Start != nil && m.InitFrom == nil {
		pm = Model{Init: func() any { return nil }, Step: func(any, node.Message, node.Message, bool) (bool, any) { return true, nil },
			Describe: m.Describe, DescribeState: func(any) string { return "unknown (the history began at a snapshot)" }}.porcupine(nil)
	}
	pm.Partition = func([]porcupine.Operation) [][]porcupine.Operation {
		out := make([][]porcupine.Operation, len(parts))
		for i, p := range parts {
			out[i] = p.ops
		}
		return out
	}
	_, info := porcupine.CheckOperationsVerbose(pm, ops, 0)
	var buf bytes.Buffer
	if err := porcupine.Visualize(pm, info, &buf); err != nil {
		return err
	}
	_, err = w.Write(buf.Bytes())
	return err
}
