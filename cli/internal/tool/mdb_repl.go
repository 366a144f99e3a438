package tool

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// maxCommandBytes bounds one line of 'trace debug' input: a longer line
// is discarded with an error, never buffered whole.
const maxCommandBytes = 1024

// mdbHelp is the interactive loop's help text.
const mdbHelp = `commands:
  n, next          step forward (the followed node's next event with 'node')
  p, prev          step backward
  j N, jump N      jump to step N (0: the start; critical; end)
  w, where         print the step the cursor is on
  s, show          the shown nodes' states after the current step, field by field
  l, list          the path, each step with the node states it changed
  node ID|all      follow one node (its events and the deliveries to it), or every node
  diff A B         field-level diff of the states after steps A and B
  live             the dead path against the nearest live path at the critical step
  graph [dot|svg]  the event graph (a ladder diagram, Graphviz DOT, or SVG)
  find REGEX       the steps whose action matches REGEX
  h, help          this text
  q, quit          leave (so does end of input)
`

// mdbCommand is one parsed command line.
type mdbCommand struct {
	name string
	args []string
}

// parseMdbCommand splits a command line into its command (aliases
// resolved) and arguments, checking their count; a blank line is the
// empty command. find keeps the rest of the line as one argument, so a
// regular expression may hold spaces.
func parseMdbCommand(line string) (mdbCommand, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return mdbCommand{}, nil
	}
	name, rest, _ := strings.Cut(line, " ")
	aliases := map[string]string{"n": "next", "p": "prev", "j": "jump", "w": "where", "s": "show", "l": "list", "h": "help", "?": "help", "q": "quit", "exit": "quit", "f": "find"}
	if a, ok := aliases[name]; ok {
		name = a
	}
	rest = strings.TrimSpace(rest)
	if name == "find" {
		if rest == "" {
			return mdbCommand{}, errors.New("find wants a regular expression")
		}
		return mdbCommand{name: name, args: []string{rest}}, nil
	}
	args := strings.Fields(rest)
	want := map[string][2]int{"next": {0, 0}, "prev": {0, 0}, "jump": {1, 1}, "where": {0, 0}, "show": {0, 0}, "list": {0, 0},
		"node": {1, 1}, "diff": {2, 2}, "live": {0, 0}, "graph": {0, 1}, "help": {0, 0}, "quit": {0, 0}}
	n, ok := want[name]
	if !ok {
		return mdbCommand{}, fmt.Errorf("unknown command %s (help lists them)", quoteShort(name))
	}
	if len(args) < n[0] || len(args) > n[1] {
		want := fmt.Sprint(n[0])
		if n[1] != n[0] {
			want = fmt.Sprintf("%d or %d", n[0], n[1])
		}
		return mdbCommand{}, fmt.Errorf("%s takes %s arguments, got %d (help lists them)", name, want, len(args))
	}
	return mdbCommand{name: name, args: args}, nil
}

// run executes one command; quit reports the loop is over.
func (d *mdb) run(c mdbCommand) (quit bool, err error) {
	switch c.name {
	case "":
	case "next":
		return false, d.step(1)
	case "prev":
		return false, d.step(-1)
	case "jump":
		n, err := d.parseStep(c.args[0])
		if err != nil {
			return false, err
		}
		d.cur = n
		d.where()
	case "where":
		d.where()
	case "show":
		if err := d.prepare(d.cur); err != nil {
			return false, err
		}
		d.where()
		return false, d.states(d.cur)
	case "list":
		d.listing()
	case "node":
		id, err := d.parseNode(c.args[0])
		if err != nil {
			return false, err
		}
		d.only = id
	case "diff":
		a, b, err := d.parseRange(c.args[0] + "," + c.args[1])
		if err != nil {
			return false, err
		}
		return false, d.diff(a, b)
	case "live":
		return false, d.live()
	case "graph":
		format := "text"
		if len(c.args) == 1 {
			format = c.args[0]
		}
		return false, d.graph(d.w, format)
	case "find":
		re, err := regexp.Compile(c.args[0])
		if err != nil {
			return false, fmt.Errorf("find: %s is not a regular expression", quoteShort(c.args[0]))
		}
		d.find(re)
	case "help":
		fmt.Fprint(d.w, mdbHelp)
	case "quit":
		return true, nil
	}
	return false, nil
}

// repl reads commands from in until quit or the end of input, printing
// the prompt "(mdb N) " before each (N the cursor's step); a bad command
// prints its error and the loop goes on.
func (d *mdb) repl(in io.Reader) error {
	r := bufio.NewReaderSize(in, maxCommandBytes)
	for {
		fmt.Fprintf(d.w, "(mdb %d) ", d.cur)
		line, err := readLine(r)
		if errors.Is(err, io.EOF) {
			fmt.Fprintln(d.w)
			return nil
		}
		if err != nil && !errors.Is(err, errLongLine) {
			return err
		}
		var c mdbCommand
		if err == nil {
			c, err = parseMdbCommand(line)
		}
		if err == nil {
			var quit bool
			if quit, err = d.run(c); quit {
				return nil
			}
		}
		if err != nil {
			fmt.Fprintf(d.w, "error: %v\n", err)
		}
	}
}

// errLongLine is readLine's error for a line past maxCommandBytes.
var errLongLine = fmt.Errorf("a command line longer than %d bytes (discarded)", maxCommandBytes)

// readLine reads one line of at most maxCommandBytes from r, discarding
// the rest of a longer one (errLongLine). A last line without a newline
// is a line; io.EOF comes only when nothing was left.
func readLine(r *bufio.Reader) (string, error) {
	line, isPrefix, err := r.ReadLine()
	if err != nil {
		return "", err
	}
	if !isPrefix {
		return string(line), nil
	}
	for isPrefix {
		if _, isPrefix, err = r.ReadLine(); err != nil {
			return "", err
		}
	}
	return "", errLongLine
}
