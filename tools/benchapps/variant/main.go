// Command variant writes a workload of profq bench's evaluation with one of its variants'
// edits made (tools/benchapps):
//
//	go run ./tools/benchapps/variant -app logpipe -variant instr2 -out DIR
//	go run ./tools/benchapps/variant -list
//
// The files are written into DIR (made if need be), over those already there: DIR may be a
// git checkout of the app, which then shows the variant as a change of its working tree.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/profq/profq/tools/benchapps"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "variant:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("variant", flag.ContinueOnError)
	src := fs.String("src", "tools/benchapps", "the directory holding the apps' directories")
	app := fs.String("app", "", "the app: "+appNames())
	variant := fs.String("variant", benchapps.Base, "the variant: "+strings.Join(benchapps.Variants, ", "))
	out := fs.String("out", "", "the directory to write the app's files into")
	list := fs.Bool("list", false, "list the apps, their targets and variants, and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *list {
		for _, a := range benchapps.Apps {
			fmt.Fprintf(stdout, "%s\t%s\n", a.Name, a.Target)
			for _, v := range benchapps.Variants[1:] {
				fmt.Fprintf(stdout, "  %s\t%s\n", v, a.Doc[v])
			}
		}
		return nil
	}
	if *app == "" || *out == "" {
		return fmt.Errorf("-app and -out are required")
	}
	a, err := benchapps.Lookup(*app)
	if err != nil {
		return err
	}
	base, err := a.Source(*src)
	if err != nil {
		return err
	}
	files, err := a.Apply(base, *variant)
	if err != nil {
		return err
	}
	return benchapps.Write(*out, files)
}

func appNames() string {
	var names []string
	for _, a := range benchapps.Apps {
		names = append(names, a.Name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
