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

// mdbAliases are the commands' short names.
var mdbAliases = map[string]string{"n": "next", "p": "prev", "j": "jump", "w": "where", "s": "show", "l": "list", "h": "help", "?": "help", "q": "quit", "exit": "quit", "f": "find"}

// mdbArity is how many arguments each command takes, at least and at
// most (find, which keeps the rest of its line, aside).
var mdbArity = map[string][2]int{"next": {0, 0}, "prev": {0, 0}, "jump": {1, 1}, "where": {0, 0}, "show": {0, 0}, "list": {0, 0},
	"node": {1, 1}, "diff": {2, 2}, "live": {0, 0}, "graph": {0, 1}, "help": {0, 0}, "quit": {0, 0}}

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
	if a, ok := mdbAliases[name]; ok {
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
	if err := checkMdbArity(name, len(args)); err != nil {
		return mdbCommand{}, err
	}
	return mdbCommand{name: name, args: args}, nil
}

// checkMdbArity checks that the command name exists and takes n
// arguments.
func checkMdbArity(name string, n int) error {
	want, ok := mdbArity[name]
	if !ok {
		return fmt.Errorf("unknown command %s (help lists them)", quoteShort(name))
	}
	if n >= want[0] && n <= want[1] {
		return nil
	}
	count := fmt.Sprint(want[0])
	if want[1] != want[0] {
		count = fmt.Sprintf("%d or %d", want[0], want[1])
	}
	return fmt.Errorf("%s takes %s arguments, got %d (help lists them)", name, count, n)
}

// run executes one command; quit reports the loop is over.
func (d *mdb) run(c mdbCommand) (quit bool, err error) {
	switch c.name {
	case "next":
		return false, d.step(1)
	case "prev":
		return false, d.step(-1)
	case "jump":
		return false, d.jump(c.args[0])
	case "where":
		d.where()
	case "show":
		return false, d.show()
	case "list":
		d.listing()
	case "node":
		return false, d.follow(c.args[0])
	case "diff":
		return false, d.diffArgs(c.args[0], c.args[1])
	case "live":
		return false, d.live()
	case "graph":
		return false, d.graph(d.w, mdbGraphFormat(c.args))
	case "find":
		return false, d.findArg(c.args[0])
	case "help":
		fmt.Fprint(d.w, mdbHelp)
	case "quit":
		return true, nil
	}
	return false, nil
}

// jump moves the cursor to the step arg names and prints it.
func (d *mdb) jump(arg string) error {
	n, err := d.parseStep(arg)
	if err != nil {
		return err
	}
	d.cur = n
	d.where()
	return nil
}

// show prints the cursor's step and the shown nodes' states after it.
func (d *mdb) show() error {
	if err := d.prepare(d.cur); err != nil {
		return err
	}
	d.where()
	return d.states(d.cur)
}

// follow makes the session follow the node arg names (or every node).
func (d *mdb) follow(arg string) error {
	id, err := d.parseNode(arg)
	if err != nil {
		return err
	}
	d.only = id
	return nil
}

// diffArgs is diff of the steps a and b name.
func (d *mdb) diffArgs(a, b string) error {
	x, y, err := d.parseRange(a + "," + b)
	if err != nil {
		return err
	}
	return d.diff(x, y)
}

// mdbGraphFormat is graph's format argument: text when there is none.
func mdbGraphFormat(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return "text"
}

// findArg is find of the regular expression expr.
func (d *mdb) findArg(expr string) error {
	re, err := regexp.Compile(expr)
	if err != nil {
		return fmt.Errorf("find: %s is not a regular expression", quoteShort(expr))
	}
	d.find(re)
	return nil
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
		quit, err := d.runLine(line, err)
		if quit {
			return nil
		}
		if err != nil {
			fmt.Fprintf(d.w, "error: %v\n", err)
		}
	}
}

// runLine parses and runs one command line read with error readErr (a
// line too long, which is not run); quit reports the loop is over.
func (d *mdb) runLine(line string, readErr error) (quit bool, err error) {
	if readErr != nil {
		return false, readErr
	}
	c, err := parseMdbCommand(line)
	if err != nil {
		return false, err
	}
	return d.run(c)
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
