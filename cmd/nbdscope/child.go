package main

import "nbdscope/engine"

func init() {
	extraCommands[engine.ChildCommand] = engine.RunChild
}
