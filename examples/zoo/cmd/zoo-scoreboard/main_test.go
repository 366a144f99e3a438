package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/examples/zoo"
	"github.com/seed6eee2ec7/crystalball/node"
)

func TestFlagErrors(t *testing.T) {
	cases := []zoo.Case{{Name: "a", Nodes: 1, Duration: time.Minute, Spec: func(bool) node.Spec { return node.Spec{} }}}
	for _, c := range []struct {
		args []string
		all  []zoo.Case
		want string
	}{
		{[]string{"--seeds", "1,x"}, cases, `--seeds: "x" is not a seed`},
		{[]string{"--seeds", "-1"}, cases, `--seeds: "-1" is not a seed`},
		{[]string{"--cases", "a,b"}, cases, `--cases: unknown case "b" (the zoo has a)`},
		{[]string{"--duration", "-1s"}, cases, "--duration must not be negative"},
		{[]string{"stray"}, cases, `unexpected argument "stray"`},
		{nil, nil, "the zoo has no cases"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), c.args, c.all, &out, &errb); code != exitUsage || out.Len() > 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want usage error %q", c.args, code, out.String(), errb.String(), c.want)
		}
	}
}
