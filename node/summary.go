package node

import (
	"reflect"
	"strings"
)

// MaxSummaryBytes bounds Summary: a longer rendering is cut there and
// ends with "…".
const MaxSummaryBytes = 240

// summaryElems is how many elements of a collection Summary shows; the
// rest are counted ("[n2 n3 n4 n5 …+7]").
const summaryElems = 4

// Summary renders a service state on one line for people — what 'trace
// show', a live node's /status and /ui and the web view print for a
// node. A state with a String method (fmt.Stringer) is rendered by it:
// that is the override, for a service whose author knows a better line.
// Otherwise the line is derived from the exported fields of the state,
// "Name=value" each, fields with their zero value left out, collections
// shortened to their first four elements and a count, nested structs in
// braces, and a String method used wherever a field's type has one
// (a node.ID prints as n3, a time.Duration as 2s). Either way the result
// is at most MaxSummaryBytes long and one line; a String method that
// panics gives "<panic>".
func Summary(s Service) string {
	if s == nil {
		return "<nil>"
	}
	if str, ok := stringOf(reflect.ValueOf(s)); ok {
		return clipSummary(str)
	}
	v := reflect.ValueOf(s)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	f := valueFormat{maxDepth: 3, maxElems: summaryElems, exportedOnly: true, skipZero: true, nameSep: "="}
	var b strings.Builder
	if v.Kind() != reflect.Struct {
		f.write(&b, v, 0)
		return clipSummary(b.String())
	}
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		fv := v.Field(i)
		if !sf.IsExported() || sf.Type.Size() == 0 || fv.IsZero() {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(sf.Name)
		b.WriteByte('=')
		f.write(&b, fv, 1)
		if b.Len() > MaxSummaryBytes {
			break
		}
	}
	if b.Len() == 0 {
		return "(every exported field zero)"
	}
	return clipSummary(b.String())
}

// clipSummary keeps s on one line and within MaxSummaryBytes, cutting at
// a rune boundary.
func clipSummary(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r", `\r`), "\n", `\n`)
	if len(s) <= MaxSummaryBytes {
		return s
	}
	cut := MaxSummaryBytes - len("…")
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
