package main

func cmdTUI(args []string) error {
	return usageErrorf("the TUI is not built yet")
}
