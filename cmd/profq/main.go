// Command profq analyzes profiles and reports for people, scripts and CI.
package main

import (
	"os"

	"github.com/profq/profq/internal/cli"
)

func main() { os.Exit(cli.Main()) }
