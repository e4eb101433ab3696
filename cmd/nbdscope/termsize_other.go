//go:build !unix

package main

import "os"

func terminalColumns(*os.File) int { return 0 }
