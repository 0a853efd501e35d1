package corekit

import "encoding/json"

// WireMarshaler is implemented by a request body whose wire form is not
// its JSON form. A body that carries a card marshals masked with
// encoding/json (MarshalJSON: the form logs, job payloads and stores
// see) and whole only through MarshalWire, which payonce.Client.Do calls once
// per operation so that every attempt sends the same bytes.
type WireMarshaler interface {
	MarshalWire() ([]byte, error)
}

// MarshalWire returns the bytes v is sent as: v.MarshalWire when v
// implements WireMarshaler, else json.Marshal(v). payonce.Client.Do encodes
// Request.Body with it; code that compares a request with the one a
// journal recorded encodes it the same way.
func MarshalWire(v any) ([]byte, error) {
	if w, ok := v.(WireMarshaler); ok {
		return w.MarshalWire()
	}
	return json.Marshal(v)
}
