package payoncetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// The conversions carry every field between the engine and the test API.
func TestConversionsCarryEveryField(t *testing.T) {
	var r Rule
	fill(t, &r)
	sameFields(t, r.engine(), r)

	var op fakeserver.Operation
	fill(t, &op)
	sameFields(t, op, operations([]fakeserver.Operation{op})[0])

	var a fakeserver.Attempt
	fill(t, &a)
	got := attempts([]fakeserver.Attempt{a})[0]
	sameFields(t, a, got, "SignatureChecked", "SignatureValid")
	assert.True(t, got.SignatureChecked)
	assert.Equal(t, *a.SignatureValid, got.SignatureValid)
	a.SignatureValid = nil
	got = attempts([]fakeserver.Attempt{a})[0]
	assert.False(t, got.SignatureChecked, "nil: not checked")
	assert.False(t, got.SignatureValid)

	var st fakeserver.Stats
	fill(t, &st)
	sameFields(t, st, stats(st))
}

// fill sets every field of the struct v points to a value that is not
// zero: strings to the field's name, numbers to its position (durations
// to a second), bools and *bool to true, time.Time to a fixed time.
func fill(t *testing.T, v any) {
	t.Helper()
	e := reflect.ValueOf(v).Elem()
	for i := range e.NumField() {
		f := e.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(e.Type().Field(i).Name)
		case reflect.Int, reflect.Int64, reflect.Uint64:
			switch {
			case f.Type() == reflect.TypeFor[time.Duration]():
				f.SetInt(int64(time.Second))
			case f.Kind() == reflect.Uint64:
				f.SetUint(uint64(i + 1))
			default:
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
		default:
			t.Fatalf("fill: no value for field %s of kind %s", e.Type().Field(i).Name, f.Kind())
		}
	}
}

// sameFields asserts that every field of got but those named in skip
// exists in want under the same name and holds the same value (converted
// to want's field type).
func sameFields(t *testing.T, want, got any, skip ...string) {
	t.Helper()
	w, g := reflect.ValueOf(want), reflect.ValueOf(got)
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[s] = true
	}
	for i := range g.NumField() {
		name := g.Type().Field(i).Name
		if skipped[name] {
			continue
		}
		wf := w.FieldByName(name)
		if !assert.True(t, wf.IsValid(), "field %s", name) {
			continue
		}
		assert.Equal(t, wf.Interface(), g.Field(i).Convert(wf.Type()).Interface(), name)
	}
}
