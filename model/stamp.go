package model

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
)

// A Stamp's fields are derived from the settings table: each field tagged
// `setting:"NAME"` holds that setting's value, in its text form for a
// string field and as its number for an int field. StampOf and Text walk
// the tags, so a setting is carried by a stamp by adding its tagged field
// and nothing else.

// stampField is a Stamp field and the setting it holds.
type stampField struct {
	index int
	st    *Setting
	text  bool // a string field: the setting's text form
}

// stampFields are the Stamp's tagged fields, in the struct's order (once,
// on first use: after the table is built).
var stampFields = sync.OnceValue(func() []stampField {
	t := reflect.TypeFor[Stamp]()
	var out []stampField
	for i := range t.NumField() {
		name, ok := t.Field(i).Tag.Lookup("setting")
		if !ok {
			continue
		}
		st, found := Lookup(name)
		kind := t.Field(i).Type.Kind()
		if !found || (kind != reflect.String && kind != reflect.Int) {
			panic(fmt.Sprintf("model.Stamp.%s: setting %q is not in the table, or its field is neither text nor int", t.Field(i).Name, name))
		}
		out = append(out, stampField{i, st, kind == reflect.String})
	}
	return out
})

func stampFieldOf(setting string) (stampField, bool) {
	for _, f := range stampFields() {
		if f.st.Name == setting {
			return f, true
		}
	}
	return stampField{}, false
}

// StampOf is the stamp of a side's configuration: each carried setting's
// value, left empty where it does not apply (the read share of a workload
// that is not mixed). The server's send buffer of a side that targets an
// external server is "external": nbdscope sets no buffer there.
func StampOf(sc SideConfig) Stamp {
	var st Stamp
	v := reflect.ValueOf(&st).Elem()
	for _, f := range stampFields() {
		if !f.st.AppliesTo(sc.Workload) {
			continue
		}
		val := sc.Value(f.st)
		if f.text {
			v.Field(f.index).SetString(f.st.Format(val))
		} else {
			v.Field(f.index).SetInt(int64(val.Int))
		}
	}
	if sc.Target != "" {
		st.SndBuf = "external"
	}
	if st.ServerRcvBuf == BufDefaultName {
		// Left out at its default, as in runs saved before the stamp
		// carried it, so those compare alike (Text reads it back).
		st.ServerRcvBuf = ""
	}
	return st
}

// Text is the stamp's value of a setting in its text form ("" where the
// setting does not apply: the read share of a workload that is not mixed,
// the command of a side running our load), and whether the stamp carries
// the setting at all (not the settings fixed for the run — target,
// backend, size — nor the pair's: mode, pause).
func (st Stamp) Text(setting string) (string, bool) {
	f, ok := stampFieldOf(setting)
	if !ok {
		return "", false
	}
	if !f.st.AppliesTo(st.Workload) {
		return "", true
	}
	v := reflect.ValueOf(st).Field(f.index)
	if f.text && v.String() == "" && setting == SetServerRcvBuf {
		return BufDefaultName, true // left out at its default (StampOf)
	}
	if f.text {
		return v.String(), true
	}
	return f.st.Format(Value{Int: int(v.Int())}), true
}

// AppliesTo reports whether the setting means something for a workload
// (the read share: only for the mixed one).
func (st *Setting) AppliesTo(workload Workload) bool {
	return st.onlyFor == nil || slices.Contains(st.onlyFor, workload)
}
