// Command zoo runs the bug zoo's cases through the crystalball command
// line: every case is a service "zoo-NAME", with its planted bug unless
// --fix all asks for the corrected twin.
//
//	go run ./examples/zoo/cmd/zoo check --service zoo-retry --nodes 4 --max-depth 12
//	go run ./examples/zoo/cmd/zoo check --service zoo-retry --nodes 4 --max-depth 12 --fix all
//	go run ./examples/zoo/cmd/zoo emulate --service zoo-cache --nodes 6 --duration 2m
//	go run ./examples/zoo/cmd/zoo emulate --service zoo-register --nodes 4 --duration 30s
package main

import (
	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/examples/zoo"
)

func main() { cli.Main(append(zoo.Services(), zoo.PropertyServices()...)...) }
