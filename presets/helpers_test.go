package presets

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"nbdscope/internal/reporttest"
	"nbdscope/model"
)

// testStore is a store in a fresh temporary directory.
func testStore(t *testing.T) *Store {
	t.Helper()
	d := t.TempDir()
	return &Store{PresetDir: filepath.Join(d, "presets"), RunDir: filepath.Join(d, "runs")}
}

// deepEqualNaN is reflect.DeepEqual with NaN equal to NaN, so that unknown
// figures compare equal.
func deepEqualNaN(a, b any) bool { return eqv(reflect.ValueOf(a), reflect.ValueOf(b)) }

func eqv(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y || (math.IsNaN(x) && math.IsNaN(y))
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return eqv(a.Elem(), b.Elem())
	case reflect.Struct:
		if a.Type() == reflect.TypeOf(time.Time{}) {
			return a.Interface().(time.Time).Equal(b.Interface().(time.Time))
		}
		for i := 0; i < a.NumField(); i++ {
			if !eqv(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		fallthrough
	case reflect.Array:
		return eqvElems(a, b)
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// eqvElems compares two arrays, slices or maps of one length element by
// element (maps by a's keys).
func eqvElems(a, b reflect.Value) bool {
	if a.Kind() == reflect.Map {
		for _, k := range a.MapKeys() {
			if !eqv(a.MapIndex(k), b.MapIndex(k)) {
				return false
			}
		}
		return true
	}
	for i := range a.Len() {
		if !eqv(a.Index(i), b.Index(i)) {
			return false
		}
	}
	return true
}

// noTempFiles fails when a directory holds leftovers of a save.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("left behind in %s: %s", dir, e.Name())
		}
	}
}

func testReport() model.Report { return reporttest.Report() }

// concurrently runs write(i) for i in 0…n-1 at once and returns each one's
// error, once all have returned.
func concurrently(n int, write func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = write(i) })
	}
	wg.Wait()
	return errs
}
