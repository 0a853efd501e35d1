package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "codestats:", err)
		os.Exit(2)
	}
}

func run(args []string, w io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: codestats api [-l] DIR | codestats funcs [-n N] DIR")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	list := fs.Bool("l", false, "list the identifiers")
	n := fs.Int("n", 10, "how many functions")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%s needs one directory", args[0])
	}
	dir := fs.Arg(0)
	switch args[0] {
	case "api":
		c, err := countAPI(dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: %d exported (%d top-level, %d methods); %d without methods that only satisfy error, fmt, encoding or slog interfaces\n",
			dir, c.total(), len(c.top), len(c.methods), c.strict())
		if *list {
			for _, s := range append(c.top, c.methods...) {
				fmt.Fprintln(w, " ", s)
			}
		}
	case "funcs":
		fns, err := longestFuncs(dir, *n)
		if err != nil {
			return err
		}
		for _, f := range fns {
			fmt.Fprintf(w, "%5d  %s  %s\n", f.lines, f.name, f.pos)
		}
	default:
		return fmt.Errorf("unknown command %q (want api or funcs)", args[0])
	}
	return nil
}
