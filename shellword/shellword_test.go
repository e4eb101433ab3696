package shellword

import (
	"reflect"
	"testing"
)

func TestSplit(t *testing.T) {
	for line, want := range map[string][]string{
		`qemu-img convert -n {uri} 'json:{"file":{"driver":"null-co"}}'`: {"qemu-img", "convert", "-n", "{uri}", `json:{"file":{"driver":"null-co"}}`},
		`a "b c" d\ e 'f''g'`: {"a", "b c", "d e", "fg"},
		`x "say \"hi\" \n"`:   {"x", `say "hi" \n`},
		"  tabs\tand\nlines ": {"tabs", "and", "lines"},
		`''`:                  {""},
	} {
		got, err := Split(line)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Split(%q) = %q, %v; want %q", line, got, err, want)
		}
	}
	for _, bad := range []string{`a 'b`, `a "b`, `a \`, "", "   "} {
		if _, err := Split(bad); err == nil {
			t.Errorf("Split(%q): no error", bad)
		}
	}
}

// Quote leaves a plain word as it is and single-quotes any other, so that
// Split reads back what Join wrote, whatever the words hold.
func TestQuoteAndJoinRoundTrip(t *testing.T) {
	for in, want := range map[string]string{
		"qemu-img":         "qemu-img",
		"--size=1g":        "--size=1g",
		"/tmp/my disk.img": "'/tmp/my disk.img'",
		"it's":             `'it'\''s'`,
		"":                 "''",
		"#comment":         "'#comment'",
		"~/x":              "'~/x'",
		"a!b":              "'a!b'",
		"{uri}":            "'{uri}'",
		"dé":               "'dé'",
		"two\nlines":       "'two\nlines'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
	words := []string{"A=B", "x=1", "json:{\"file\":{\"driver\":\"null-co\"}}", "it's", "", "$HOME", "a b\tc", "back\\slash"}
	line := Join(words)
	if line[:5] != "'A=B'" {
		t.Errorf("Join left a first word with = bare (an assignment to sh): %s", line)
	}
	got, err := Split(line)
	if err != nil || !reflect.DeepEqual(got, words) {
		t.Errorf("Split(Join(%q)) = %q, %v (line %s)", words, got, err, line)
	}
	if q := QuoteAlways("4096"); q != "'4096'" {
		t.Errorf("QuoteAlways(4096) = %s", q)
	}
}
