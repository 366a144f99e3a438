package zoo

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/cli"
)

// Services offers every case to cli.Main as "zoo-" + Name, with the
// planted bug by default; "--fix all" runs the corrected twin.
func Services() []cli.Service {
	cases := Cases()
	out := make([]cli.Service, 0, len(cases))
	for _, c := range cases {
		out = append(out, service(c))
	}
	return out
}

// service is one case as a cli.Service.
func service(c Case) cli.Service {
	s := cli.Service{
		Name:     "zoo-" + c.Name,
		Spec:     c.Spec(false),
		Workload: c.Workload,
		Options:  "bug",
	}
	s.Configure = func(fixes []string, nodes int) (cli.Service, error) {
		out := s
		for _, f := range fixes {
			if f != "all" {
				return cli.Service{}, fmt.Errorf("zoo: unknown correction %q (the zoo's cases take only \"all\")", f)
			}
			out.Spec, out.Options = c.Spec(true), "fixed"
		}
		return out, nil
	}
	return s
}
