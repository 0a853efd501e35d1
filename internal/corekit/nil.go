package corekit

import (
	"net/http"
	"reflect"
)

// IsNil reports a nil interface or an interface holding a nil pointer,
// map, slice, func or channel: an option given one refuses it, since the
// first call through it would panic.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// SignerFunc adapts a function to payonce.Signer.
type SignerFunc func(req *http.Request, body []byte) error

// Sign calls f.
func (f SignerFunc) Sign(req *http.Request, body []byte) error { return f(req, body) }
