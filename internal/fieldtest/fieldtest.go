// Package fieldtest checks, in tests, that code copying a struct into
// another of the same shape (the test packages' wrappers of the fake
// engine's types) carries every field.
package fieldtest

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Fill sets every field of the struct v points to a value that is not
// zero: strings to the field's name, numbers to its position (durations
// to a second), bools to true, *bool to true, time.Time to a fixed time,
// another struct (payonce.Amount) to the JSON string "1.25".
func Fill(t testing.TB, v any) {
	t.Helper()
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
			if f.Type() == reflect.TypeFor[time.Time]() {
				f.Set(reflect.ValueOf(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)))
			} else if err := json.Unmarshal([]byte(`"1.25"`), f.Addr().Interface()); err != nil {
				t.Fatalf("fieldtest: cannot fill %s: %v", f.Type(), err)
			}
		}
	}
}

// SameFields asserts that every field of got exists in want under the same
// name and holds the same value (converted to want's field type).
func SameFields(t testing.TB, want, got any) {
	t.Helper()
	SameFieldsExcept(t, want, got)
}

// SameFieldsExcept is SameFields for every field of got but those named in
// skip, which the caller checks itself (a field whose type differs).
func SameFieldsExcept(t testing.TB, want, got any, skip ...string) {
	t.Helper()
	w, g := reflect.ValueOf(want), reflect.ValueOf(got)
	for i := range g.NumField() {
		name := g.Type().Field(i).Name
		if slices.Contains(skip, name) {
			continue
		}
		wf := w.FieldByName(name)
		if !assert.True(t, wf.IsValid(), "field %s", name) {
			continue
		}
		assert.Equal(t, wf.Interface(), g.Field(i).Convert(wf.Type()).Interface(), name)
	}
}
