package main

import "github.com/spf13/cobra"

// newBenchLan2023Cmd is `optsched bench lan2023`: the reproductions of
// the NSA paper's Fig. 6 and Tables III and IV on its published trace.
func newBenchLan2023Cmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lan2023",
		Short: "Reproduce Fig. 6 and Tables III–IV of Lan et al. (CLUSTER 2023) on the paper's trace",
	}
	// Subcommands, one per reproduction.
	cmd.AddCommand(newBenchLan2023Fig6Cmd(s))
	cmd.AddCommand(newBenchLan2023TableCmd(s, "table3"), newBenchLan2023TableCmd(s, "table4"))
	return cmd
}
