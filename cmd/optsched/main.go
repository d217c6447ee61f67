// Command optsched solves HPC scheduling windows: topology-aware job
// allocation on fat-tree clusters with proven optimality gaps. Run
// `optsched help` for the commands.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
