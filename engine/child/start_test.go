package child

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"nbdscope/engine/wire"
	"nbdscope/model"
	"nbdscope/nbd"
)

// otherValue is a valid value of st for sc other than its current one:
// one it completes to, else a step up or down, else a bound.
func otherValue(st *model.Setting, sc model.SideConfig) (model.Value, bool) {
	cur := sc.Value(st)
	try := func(v model.Value) bool {
		n := sc
		return v != cur && n.SetValue(st, v) == nil
	}
	for _, text := range st.Values() {
		if v, err := st.Parse(text); err == nil && try(v) {
			return v, true
		}
	}
	for _, dir := range []int{1, -1} {
		if v, ok := st.Step(cur, dir, 212992); ok && try(v) {
			return v, true
		}
	}
	for _, n := range []int{st.Min, st.Max} {
		if v := (model.Value{Int: n}); try(v) {
			return v, true
		}
	}
	return cur, false
}

// argText is a child argument as a child's settings readback writes it.
func argText(a model.ChildArg) string {
	if a.Str != "" {
		return a.Str
	}
	return strconv.Itoa(a.Int)
}

// TestLoadStartsWithEveryLoadSetting: every setting the table starts in
// the load (live in it) reaches the load role through its start spec,
// with no field of its own there: for each, a side with a value other
// than the default starts a load that reads back that value. A new
// setting's start value needs its table entry and the load reading it,
// and this fails for one the load does not read.
func TestLoadStartsWithEveryLoadSetting(t *testing.T) {
	uri := serveBackend(t, nbd.NewNull(1<<30, 0))
	n := 0
	for _, st := range model.Settings() {
		if st.StartsIn() != model.RoleLoad || st.Where != model.AtLoad {
			continue
		}
		sc := model.DefaultSide("A")
		v, ok := otherValue(st, sc)
		if !ok {
			t.Errorf("%s: no other valid value to start with", st.Name)
			continue
		}
		if err := sc.SetValue(st, v); err != nil {
			t.Fatal(err)
		}
		spec := wire.NewLoadSpec(sc, uri, model.ArgEnv{})
		spec.Paused = true
		ctx, cancel := context.WithCancel(context.Background())
		ro, _, err := startLoadRole(ctx, spec)
		if err != nil {
			cancel()
			t.Fatalf("%s=%s: %v", st.Name, st.Format(v), err)
		}
		got := ro.handle(wire.Cmd{Op: "get"}).Settings[st.Name]
		ro.close()
		cancel()
		if want := argText(st.ChildArg(v, sc, model.ArgEnv{})); got != want {
			t.Errorf("%s=%s: the load started with %q, want %q", st.Name, st.Format(v), got, want)
		}
		n++
	}
	if n < 9 {
		t.Errorf("%d load settings checked, want the table's 9 or more", n)
	}
}

// TestServerStartsWithItsSendBuffer: the server's live setting reaches
// it through its start spec the same way.
func TestServerStartsWithItsSendBuffer(t *testing.T) {
	st, _ := model.Lookup(model.SetSndBuf)
	sc := model.DefaultSide("A")
	v, _ := st.Parse("1m")
	if err := sc.SetValue(st, v); err != nil {
		t.Fatal(err)
	}
	sc.Size = 1 << 20
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ro, _, err := startServerRole(ctx, wire.NewServerSpec(sc, t.TempDir()+"/s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.close()
	if got := ro.handle(wire.Cmd{Op: "get"}).Settings[st.Name]; got != strconv.Itoa(1<<20) {
		t.Errorf("the server started with sndbuf %q, want %d", got, 1<<20)
	}
}

// TestLoadRefusesAnEmptyExport: a server whose export has 0 bytes (a real
// server on an empty file) is refused with what it is, where the load's
// workers took every offset modulo 0 and died with a stack trace.
func TestLoadRefusesAnEmptyExport(t *testing.T) {
	uri := serveBackend(t, nbd.NewNull(0, 0))
	spec := wire.NewLoadSpec(model.DefaultSide("A"), uri, model.ArgEnv{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ro, _, err := startLoadRole(ctx, spec)
	if err == nil {
		ro.close()
		t.Fatal("a load on an empty export started")
	}
	if !strings.Contains(err.Error(), "is empty (0 bytes)") {
		t.Errorf("the refusal %q does not say the export is empty", err)
	}
}
