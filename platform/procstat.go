package platform

import (
	"bytes"
	"strings"
)

// StatFields are the fields of a /proc/PID/stat (or a task's stat) text
// after the command name: the state (field 3) first, then ppid, pgrp, ….
// The command, field 2, is in parentheses and may itself hold spaces and
// parentheses, so the fields are counted from the last ')'. ok is false
// for a text without one. The one reading of that layout, where the
// call counter, the socket tree, the real-process and the client-group
// readers each cut at the ')' themselves (testbin keeps its own: nbd's
// tests use it, and platform imports nbd).
func StatFields(stat []byte) (fields []string, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(string(stat[i+1:])), true
}
