package main

import (
	"github.com/spf13/cobra"

	"nbdscope/report"
	"nbdscope/units"
)

// addRateUnitFlag adds --rate-unit, and iperf3's -f for it, to cmd.
func addRateUnitFlag(cmd *cobra.Command) *string {
	return cmd.Flags().StringP("rate-unit", "f", "", "show rates in `UNIT`: gib, gbit, mib or mbit, or iperf3's -f letters G, g, M, m (JSON and CSV stay bytes per second)")
}

// setRateUnit applies --rate-unit (bad usage for an unknown unit, or
// an empty one typed).
func setRateUnit(name string, given bool) error {
	report.SetRateUnit(nil)
	if name == "" && !given {
		return nil
	}
	u, err := units.ParseRateScale(name)
	if err != nil {
		return usageErrorf("--rate-unit: %v", err)
	}
	report.SetRateUnit(&u)
	return nil
}
