package model

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestValueErrorsSayTheValueOnce: every refusal of a side's value, by
// Parse or by SetValue (the side's Validate), is a *ValueError whose
// reason names neither the setting nor the value, so an edge can name
// them its own way; its text names each once.
func TestValueErrorsSayTheValueOnce(t *testing.T) {
	for _, c := range []struct{ setting, value string }{
		{SetSndBuf, "zz"}, {SetClientRcvBuf, "1"}, {SetConnections, "0"}, {SetInFlight, "x"},
		{SetSize, "x"}, {SetSize, "-1"}, {SetHashThreads, "0"}, {SetWorkload, "foo"},
		{SetServer, "nosuch"}, {SetTarget, "foo://x"}, {SetBackend, "foo"},
		// The commands' quoting errors too: shellword.Split's text said
		// the line again (unterminated " in "a \"b").
		{SetExec, "qemu-img 'unclosed"}, {SetExec, `a "b`}, {SetServer, "nbdkit -U {socket} 'x"},
	} {
		sc := DefaultSide("B")
		err := sc.Set(c.setting, c.value)
		var ve *ValueError
		if !errors.As(err, &ve) {
			t.Errorf("%s=%s: %v (%T), want a *ValueError", c.setting, c.value, err, err)
			continue
		}
		reason := ve.Reason.Error()
		if ve.Setting != c.setting || ve.Value != c.value || strings.Contains(reason, strconv.Quote(c.value)) ||
			strings.Contains(reason, c.setting) {
			t.Errorf("%s=%s: setting %q, value %q, reason %q: want the setting and value apart, not in the reason", c.setting, c.value, ve.Setting, ve.Value, reason)
		}
		if n := strings.Count(err.Error(), strconv.Quote(c.value)); n != 1 {
			t.Errorf("%s=%s: %q names the value %d times", c.setting, c.value, err, n)
		}
	}
}
