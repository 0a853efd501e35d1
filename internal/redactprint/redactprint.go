package redactprint

import (
	"github.com/payonce/payonce/redact"

	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Format writes plain, a result converted to a type of the same fields
// without printing methods, as fmt prints a struct (%v, %+v, %#v, where
// name stands for plain's type name), each field redacted on its own
// (redact.String): a field with printing methods of its own (a
// Meta, a RawJSON, an Amount, a time) prints itself, as it redacts
// itself; a pointer prints as its address, as fmt prints it inside a
// struct; any other field, unexported ones included, is redacted here.
// %q quotes the %v form and every other verb prints it rather than
// spelling out bytes (%x of a card number is still a card number).
func Format(f fmt.State, verb rune, plain any, name string) {
	sharp, plus := verb == 'v' && f.Flag('#'), verb == 'v' && f.Flag('+')
	rv := reflect.ValueOf(plain)
	t := rv.Type()
	var b strings.Builder
	if sharp {
		b.WriteString(name)
	}
	b.WriteByte('{')
	for i := range t.NumField() {
		if i > 0 && sharp {
			b.WriteString(", ")
		} else if i > 0 {
			b.WriteByte(' ')
		}
		if sharp || plus {
			b.WriteString(t.Field(i).Name + ":")
		}
		fv := rv.Field(i)
		var s string
		switch {
		case sharp:
			s = fmt.Sprintf("%#v", fv)
		case plus:
			s = fmt.Sprintf("%+v", fv)
		default:
			s = fmt.Sprintf("%v", fv)
		}
		switch {
		case printsItself(fv, sharp):
		case fv.Kind() == reflect.Pointer:
			s = pointer(fv, sharp) // as fmt prints a pointer inside a struct
		default:
			s = redact.String(s)
		}
		b.WriteString(s)
	}
	b.WriteByte('}')
	s := b.String()
	if verb == 'q' {
		s = strconv.Quote(s)
	}
	_, _ = io.WriteString(f, s)
}

// pointer is a pointer field as fmt prints it inside a struct: its
// address, never what it points to.
func pointer(v reflect.Value, sharp bool) string {
	switch {
	case sharp && v.IsNil():
		return "(" + v.Type().String() + ")(nil)"
	case sharp:
		return fmt.Sprintf("(%s)(%#x)", v.Type(), v.Pointer())
	case v.IsNil():
		return "<nil>"
	}
	return fmt.Sprintf("%#x", v.Pointer())
}

// printsItself reports whether fmt prints v through a method of its own
// (Format, or GoString under %#v, or String), which the SDK's types use
// to redact themselves: redacting their text again could mask what they
// keep readable on purpose (a Meta's idempotency key next to a date).
func printsItself(v reflect.Value, sharp bool) bool {
	if !v.CanInterface() || (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
		return false
	}
	switch v.Interface().(type) {
	case time.Time, time.Duration:
		return true // a server's time is parsed, never its text: nothing to redact (and GoStringer would hide its String)
	case fmt.Formatter:
		return true
	case fmt.GoStringer:
		return sharp
	case fmt.Stringer:
		return !sharp
	}
	return false
}

// LogValue is the slog form of v, a struct or a pointer to one: a group
// of its exported fields, named by their JSON names when they have one,
// with every string passed through redact.String; a field that is
// a slog.LogValuer (a Meta, a RawJSON, a nested result) logs itself, one
// that formats itself for fmt (a card number, a CVV) logs that text, and
// an embedded struct's fields are the group's own.
func LogValue(v any) slog.Value {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return slog.AnyValue(nil)
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return value(rv)
	}
	return slog.GroupValue(fields(rv)...)
}

func fields(rv reflect.Value) []slog.Attr {
	t := rv.Type()
	attrs := make([]slog.Attr, 0, t.NumField())
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		fv := value(rv.Field(i))
		if sf.Anonymous && fv.Kind() == slog.KindGroup {
			attrs = append(attrs, fv.Group()...)
			continue
		}
		name := sf.Name
		if tag, _, _ := strings.Cut(sf.Tag.Get("json"), ","); tag != "" && tag != "-" {
			name = tag
		}
		attrs = append(attrs, slog.Attr{Key: name, Value: fv})
	}
	return attrs
}

func value(rv reflect.Value) slog.Value {
	if !rv.IsValid() {
		return slog.AnyValue(nil)
	}
	if (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface) && rv.IsNil() {
		// A nil pointer to a type whose LogValue has a value receiver
		// would panic in it.
		return slog.AnyValue(nil)
	}
	if rv.CanInterface() {
		switch x := rv.Interface().(type) {
		case slog.LogValuer:
			return x.LogValue().Resolve()
		case time.Time:
			return slog.TimeValue(x)
		case time.Duration:
			return slog.DurationValue(x)
		case fmt.Formatter:
			// A value that masks itself for fmt (payonce.CardNumber,
			// payonce.CVV) logs its masked text, never its raw string.
			return slog.StringValue(redact.String(fmt.Sprint(x)))
		case fmt.Stringer:
			if rv.Kind() != reflect.String {
				return slog.StringValue(redact.String(x.String()))
			}
		}
	}
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return slog.AnyValue(nil)
		}
		return value(rv.Elem())
	case reflect.String:
		return slog.StringValue(redact.String(rv.String()))
	case reflect.Bool:
		return slog.BoolValue(rv.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return slog.Int64Value(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return slog.Uint64Value(rv.Uint())
	case reflect.Float32, reflect.Float64:
		return slog.Float64Value(rv.Float())
	case reflect.Struct:
		return slog.GroupValue(fields(rv)...)
	case reflect.Slice, reflect.Array:
		attrs := make([]slog.Attr, rv.Len())
		for i := range attrs {
			attrs[i] = slog.Attr{Key: strconv.Itoa(i), Value: value(rv.Index(i))}
		}
		return slog.GroupValue(attrs...)
	}
	return slog.StringValue(redact.String(fmt.Sprintf("%v", rv)))
}
