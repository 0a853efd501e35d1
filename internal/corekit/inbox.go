package corekit

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on what an inbox stores.
const (
	// MaxEventBody is the longest delivered body the inbox's runner
	// accepts, in bytes, before redaction.
	MaxEventBody = 256 << 10
	// MaxStoredEventBody is the longest body an inbox stores, in bytes:
	// redaction may lengthen a body (a JSON string escapes what it
	// holds), never past this from a body of MaxEventBody.
	MaxStoredEventBody = 8 * MaxEventBody
	// MaxEventText bounds an event's identity, resource, type and lease
	// owner, in bytes.
	MaxEventText = MaxReferenceLen
	// MaxEventError bounds the reason a handler run failed, in bytes.
	MaxEventError = MaxSettleReason
)

// EventText reports whether s is fit for an inbox's identity fields and
// for a terminal: valid UTF-8 holding no control character (C0, DEL, C1),
// no format character (bidirectional overrides such as U+202E, zero-width
// characters, the byte-order mark) and no line or paragraph separator.
func EventText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !eventRune(r) {
			return false
		}
	}
	return true
}

func eventRune(r rune) bool {
	return !unicode.IsControl(r) && !unicode.Is(unicode.Cf, r) && r != '\u2028' && r != '\u2029'
}

// SafeEventText is s with every byte or rune EventText refuses turned
// into a space: a text (a handler's error) fit to be stored.
func SafeEventText(s string) string {
	if EventText(s) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !eventRune(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, " "))
}

// CheckEventField validates one text field of an inbox event: at most
// maxLen bytes, non-empty when required, EventText. The error quotes no
// byte of s but its length; callers wrap it in their invalid-event kind.
func CheckEventField(name, s string, required bool, maxLen int) error {
	switch {
	case s == "" && required:
		return fmt.Errorf("%s is empty", name)
	case len(s) > maxLen:
		return fmt.Errorf("%s is %d bytes, longer than %d", name, len(s), maxLen)
	case !EventText(s):
		return fmt.Errorf("%s holds a control or format character or is not UTF-8", name)
	}
	return nil
}
