package fakeserver

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// keyEcho is the member the fakes add to their resources, an extension
// neither provider documents: the Idempotency-Key of the request that
// made the resource (an A55 charge, a Coinepay card), and the A55 list
// filter of the same name.
const keyEcho = "idempotency_key"

// SetDocumentedAnswers turns the documented-answers mode on or off: on,
// every answer leaves out the fake's own extension (the key that made a
// resource, at any depth of the JSON) and a list ignores the filter by
// key, as A55's and Coinepay's documented answers carry no key. Off (the
// default), the fakes echo keys, which lets a settle lookup tell two
// identical operations apart where the real providers do not.
func (e *Engine) SetDocumentedAnswers(on bool) { e.documented.Store(on) }

// DocumentedAnswers reports whether the documented-answers mode is on.
func (e *Engine) DocumentedAnswers() bool { return e.documented.Load() }

// documentedRequest drops the fake's own list filter from r's query.
func documentedRequest(r *http.Request) {
	if q := r.URL.Query(); q.Has(keyEcho) {
		q.Del(keyEcho)
		r.URL.RawQuery = q.Encode()
	}
}

// withoutKeyEcho returns body without any object member named
// idempotency_key, keeping everything else in order; a body that is not
// JSON, or holds no such member, is returned as it is.
func withoutKeyEcho(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"`+keyEcho+`"`)) {
		return body
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var out bytes.Buffer
	if copyWithout(dec, &out) != nil || dec.More() {
		return body
	}
	return out.Bytes()
}

// copyWithout copies the next JSON value of dec to out, leaving out the
// members named keyEcho of every object.
func copyWithout(dec *json.Decoder, out *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return writeScalar(out, tok)
	}
	if d == '[' {
		out.WriteByte('[')
		for i := 0; dec.More(); i++ {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := copyWithout(dec, out); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		out.WriteByte(']')
		return err
	}
	out.WriteByte('{')
	first := true
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := k.(string)
		if name == keyEcho {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			continue
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		if err := writeScalar(out, name); err != nil {
			return err
		}
		out.WriteByte(':')
		if err := copyWithout(dec, out); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	out.WriteByte('}')
	return err
}

// writeScalar writes a string, number, boolean or null token.
func writeScalar(out *bytes.Buffer, tok any) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(tok); err != nil {
		return err
	}
	out.Truncate(out.Len() - 1) // Encode's newline
	return nil
}
