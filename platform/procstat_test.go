package platform

import (
	"slices"
	"testing"
)

// A command name with spaces and parentheses does not shift the fields.
func TestStatFields(t *testing.T) {
	f, ok := StatFields([]byte("42 (a (b) c) S 1 42 42 0 -1\n"))
	if !ok || !slices.Equal(f, []string{"S", "1", "42", "42", "0", "-1"}) {
		t.Errorf("StatFields = %q, %v", f, ok)
	}
	if _, ok := StatFields([]byte("42 no parenthesis")); ok {
		t.Error("a text without ')' read as a stat")
	}
}
