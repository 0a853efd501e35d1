package coinepaytest

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/payonce/payonce/internal/fakeserver"
)

// fill sets every field of the struct v points to a value that is not zero.
func fill(v any) {
	e := reflect.ValueOf(v).Elem()
	for i := range e.NumField() {
		f := e.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(e.Type().Field(i).Name)
		case reflect.Int, reflect.Int64:
			if f.Type() == reflect.TypeFor[time.Duration]() {
				f.SetInt(int64(time.Second))
			} else {
				f.SetInt(int64(i + 1))
			}
		case reflect.Float64:
			f.SetFloat(0.5)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
			f.Elem().SetBool(true)
		case reflect.Struct:
			f.Set(reflect.ValueOf(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)))
		}
	}
}

// sameFields asserts that every field of want also in got holds the same
// value, and that got has no field want lacks.
func sameFields(t *testing.T, want, got any) {
	t.Helper()
	w, g := reflect.ValueOf(want), reflect.ValueOf(got)
	for i := range g.NumField() {
		name := g.Type().Field(i).Name
		wf := w.FieldByName(name)
		if !assert.True(t, wf.IsValid(), "field %s", name) {
			continue
		}
		assert.Equal(t, wf.Convert(wf.Type()).Interface(), g.Field(i).Convert(wf.Type()).Interface(), name)
	}
}

// The wrappers carry every field between the engine and the test API.
func TestConversionsCarryEveryField(t *testing.T) {
	var r Rule
	fill(&r)
	sameFields(t, r.engine(), r)

	var op fakeserver.Operation
	fill(&op)
	sameFields(t, op, operations([]fakeserver.Operation{op})[0])

	var a fakeserver.Attempt
	fill(&a)
	sameFields(t, a, attempts([]fakeserver.Attempt{a})[0])

	var st fakeserver.Stats
	fill(&st)
	sameFields(t, st, stats(st))
}
