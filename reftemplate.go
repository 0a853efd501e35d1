package payonce

import "strings"

// referenceTemplate is the kind of operation a journal reference names,
// with what identifies one operation replaced by "{id}", so that
// observers may label spans and metrics by it with a bounded number of
// values: "order-{id}/charge" for "order-42/charge". A reference is read
// as segments split at '/', each made of tokens split at '-', '_', '.'
// and ':'. A token is kept when it is a word, 1 to 32 lowercase ASCII
// letters; any other token (digits, capitals, other letters) is an ID.
// A segment holding anything else than those letters, digits and
// separators is one ID; IDs joined by separators become one, and so do
// words of hexadecimal letters joined to an ID ("550e8400-beef-..."). The
// raw reference never reaches an observer: the client gives this form
// in OperationInfo.ReferenceTemplate.
func referenceTemplate(ref string) string {
	if ref == "" {
		return ""
	}
	var b strings.Builder
	b.Grow(len(ref))
	for i, seg := range strings.Split(ref, "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(segmentTemplate(seg))
	}
	return b.String()
}

// refSeparator reports the bytes that split a reference segment into
// tokens.
func refSeparator(c byte) bool { return c == '-' || c == '_' || c == '.' || c == ':' }

// segmentTemplate is one segment of ReferenceTemplate.
func segmentTemplate(seg string) string {
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if !refSeparator(c) && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return "{id}"
		}
	}
	// tokens alternate with the separators between them.
	type token struct {
		text string
		id   bool
	}
	var toks []token
	var seps []byte
	start := 0
	for i := 0; i <= len(seg); i++ {
		if i < len(seg) && !refSeparator(seg[i]) {
			continue
		}
		t := seg[start:i]
		toks = append(toks, token{t, t != "" && !refWord(t)})
		if i < len(seg) {
			seps = append(seps, seg[i])
		}
		start = i + 1
	}
	for i := range toks { // hex words joined to an ID are part of it
		if !toks[i].id && hexWord(toks[i].text) && ((i > 0 && toks[i-1].id) || (i+1 < len(toks) && toks[i+1].id)) {
			toks[i].id = true
		}
	}
	for i := len(toks) - 1; i >= 0; i-- { // and so is a run of them backwards
		if !toks[i].id && hexWord(toks[i].text) && i+1 < len(toks) && toks[i+1].id {
			toks[i].id = true
		}
	}
	var b strings.Builder
	for i, t := range toks {
		if i > 0 && !(t.id && toks[i-1].id) {
			b.WriteByte(seps[i-1])
		}
		switch {
		case !t.id:
			b.WriteString(t.text)
		case i == 0 || !toks[i-1].id:
			b.WriteString("{id}")
		}
	}
	return b.String()
}

// refWord reports 1 to maxWordLen lowercase ASCII letters.
func refWord(s string) bool {
	if s == "" || len(s) > maxWordLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// hexWord reports a word of the letters a hexadecimal ID may hold.
func hexWord(s string) bool {
	return s != "" && strings.Trim(s, "abcdef") == ""
}
