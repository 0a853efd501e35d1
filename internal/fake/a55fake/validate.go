package a55fake

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// maxStringBytes bounds every string of a request body.
const maxStringBytes = 1024

// Error codes of the general shape the fake answers with.
const (
	codeInvalidRequest   = "INVALID_REQUEST"        // 400: malformed JSON or a member of the wrong JSON type
	codeValidation       = "VALIDATION_ERROR"       // 422: a rule of the reference
	codeAmountInvalid    = "AMOUNT_INVALID"         // 422: an amount below 0.01, too long, or with too many decimals
	codeCurrency         = "CURRENCY_NOT_SUPPORTED" // 422: a currency the endpoint or method does not take
	codeInvalidCard      = "INVALID_CARD"           // 422: a card number or expiry of the wrong shape
	codeExpiredCard      = "EXPIRED_CARD"           // 422: a card expired before the fake clock's month
	codeInvalidCVC       = "INVALID_CVC"            // 422: a CVV that is not 3 or 4 digits
	codeNotFound         = "NOT_FOUND"              // 404
	codeForbidden        = "FORBIDDEN"              // 403: another client's wallet
	codeCancelNotAllowed = "CANCEL_NOT_ALLOWED"
)

// checks collects what is wrong with a request body: members of the
// wrong JSON type (answered 400) and broken rules (answered 422), each
// naming its field as a path: "payer_address.street", "items[0].name".
type checks struct {
	typeErrs []Detail
	rules    []Detail
	codes    []string // a code per rule
}

// maxDetails bounds the details of one answer: a body of many broken
// items gets the first ones.
const maxDetails = 50

func (c *checks) wrongType(field string, want jsonKind) {
	if len(c.typeErrs) < maxDetails {
		c.typeErrs = append(c.typeErrs, Detail{Field: field, Reason: "want a JSON " + want.String()})
	}
}

func (c *checks) rule(field, reason string) { c.ruleCode(field, reason, codeValidation) }

func (c *checks) ruleCode(field, reason, code string) {
	if len(c.rules) < maxDetails {
		c.rules = append(c.rules, Detail{Field: field, Reason: reason})
		c.codes = append(c.codes, code)
	}
}

func (c *checks) ok() bool { return len(c.typeErrs) == 0 && len(c.rules) == 0 }

// answer renders the problems: 400 when a member has the wrong JSON type,
// else 422 with every broken rule; the code is the rules' own when they
// share one (AMOUNT_INVALID, CURRENCY_NOT_SUPPORTED, ...), else
// VALIDATION_ERROR.
func (c *checks) answer(f *Fake) fakeserver.Response {
	if len(c.typeErrs) > 0 {
		return f.generalError(http.StatusBadRequest, codeInvalidRequest, "a member has the wrong JSON type", c.typeErrs)
	}
	code := c.codes[0]
	for _, k := range c.codes[1:] {
		if k != code {
			code = codeValidation
			break
		}
	}
	return f.generalError(http.StatusUnprocessableEntity, code, "the request breaks the API reference's rules", c.rules)
}

// object is a decoded JSON object: its members as they were sent.
type object map[string]json.RawMessage

// parseObject decodes body as one JSON object; ok is false when it is
// not well-formed JSON, and isObject false when it is JSON of another type.
func parseObject(body []byte) (obj object, ok, isObject bool) {
	if !json.Valid(body) {
		return nil, false, false
	}
	t := bytes.TrimLeft(body, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return nil, true, false
	}
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, false, false
	}
	return obj, true, true
}

// kindOf returns the JSON type of a valid JSON value; null is 0.
func kindOf(raw json.RawMessage) jsonKind {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	switch raw[0] {
	case '"':
		return kString
	case '{':
		return kObject
	case '[':
		return kArray
	case 't', 'f':
		return kBool
	case 'n':
		return 0
	}
	if bytes.ContainsAny(raw, ".eE") {
		return kNumber
	}
	return kInteger
}

// accepts reports whether a value of JSON type got fits want.
func accepts(want, got jsonKind) bool {
	switch want {
	case kNumber:
		return got == kNumber || got == kInteger
	case kAmount:
		return got == kNumber || got == kInteger || got == kString
	}
	return want == got
}

// walk checks the members of obj against fs: JSON types, required
// members present, enums, strings printable and bounded, and no member
// the reference does not list (unless open). prefix names obj's path.
func (c *checks) walk(prefix string, obj object, fs []field, open bool) {
	for _, f := range fs {
		name := prefix + f.name
		raw, present := obj[f.name]
		got := kindOf(raw)
		switch {
		case !present || got == 0:
			if f.required {
				c.rule(name, "required")
			}
			continue
		case !accepts(f.kind, got):
			c.wrongType(name, f.kind)
			continue
		}
		switch got {
		case kString:
			s := rawString(raw)
			switch {
			case len(s) > maxStringBytes:
				c.rule(name, "longer than "+strconv.Itoa(maxStringBytes)+" bytes")
			case !printable(s):
				c.rule(name, "holds control characters or invalid UTF-8")
			case f.required && strings.TrimSpace(s) == "":
				c.rule(name, "required: must not be empty")
			case f.enum != nil && !contains(f.enum, s):
				code := codeValidation
				if f.name == "currency" {
					code = codeCurrency
				}
				c.ruleCode(name, "want one of "+strings.Join(f.enum, ", "), code)
			}
		case kObject:
			var sub object
			_ = json.Unmarshal(raw, &sub) // valid JSON of this type
			c.walk(name+".", sub, f.fields, f.open)
		case kArray:
			var elems []json.RawMessage
			_ = json.Unmarshal(raw, &elems)
			for i, e := range elems {
				en := name + "[" + strconv.Itoa(i) + "]"
				if kindOf(e) != kObject {
					c.wrongType(en, kObject)
					continue
				}
				var sub object
				_ = json.Unmarshal(e, &sub)
				c.walk(en+".", sub, f.fields, false)
			}
		}
	}
	if open {
		return
	}
	var unknown []string
	for k := range obj {
		if !hasField(fs, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		c.rule(prefix+memberName(k), "not a member of this body in A55's API reference")
	}
}

// memberName is an unknown member's name as a detail shows it: at most
// 64 bytes, printable, and a run of 12 or more digits (a card number
// sent as a name) masked but its last four.
func memberName(k string) string {
	if len(k) > 64 {
		k = k[:64] + "..."
	}
	if !printable(k) {
		return "(a name with control characters)"
	}
	b := []byte(k)
	for i := 0; i < len(b); {
		j := i
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j-i >= 12 {
			for x := i; x < j-4; x++ {
				b[x] = '*'
			}
		}
		if j == i {
			j++
		}
		i = j
	}
	return string(b)
}

func hasField(fs []field, name string) bool {
	for _, f := range fs {
		if f.name == name {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// rawString returns the string a JSON string value holds ("" for any
// other value). A string without escapes is sliced, not decoded.
func rawString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw[1:len(raw)-1], '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// printable reports whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}

// str returns obj's member name as a string, "" when absent or not one.
func (o object) str(name string) string {
	raw, ok := o[name]
	if !ok || kindOf(raw) != kString {
		return ""
	}
	return rawString(raw)
}

// has reports whether obj holds name with a value other than null.
func (o object) has(name string) bool {
	raw, ok := o[name]
	return ok && kindOf(raw) != 0
}

// number returns the text of obj's member name when it is a JSON number
// (or, for kAmount members, a string), "" otherwise.
func (o object) number(name string) string {
	raw, ok := o[name]
	if !ok {
		return ""
	}
	switch kindOf(raw) {
	case kNumber, kInteger:
		return string(bytes.TrimSpace(raw))
	case kString:
		return rawString(raw)
	}
	return ""
}

// boolean returns obj's member name as a bool and whether it was given.
func (o object) boolean(name string) (v, given bool) {
	raw, ok := o[name]
	if !ok || kindOf(raw) != kBool {
		return false, false
	}
	return bytes.HasPrefix(bytes.TrimSpace(raw), []byte("true")), true
}

// sub returns obj's member name as an object (nil when absent).
func (o object) sub(name string) object {
	raw, ok := o[name]
	if !ok || kindOf(raw) != kObject {
		return nil
	}
	var s object
	_ = json.Unmarshal(raw, &s)
	return s
}

// list returns obj's member name as objects (nil when absent).
func (o object) list(name string) []object {
	raw, ok := o[name]
	if !ok || kindOf(raw) != kArray {
		return nil
	}
	var elems []object
	_ = json.Unmarshal(raw, &elems)
	return elems
}

// checkAmount checks a member that holds an amount of a currency with
// places decimals, and returns it.
func (c *checks) checkAmount(field, text string, places int, positive bool) (decimal, bool) {
	parse := parseDecimal
	if positive {
		parse = parsePositive
	}
	d, err := parse(text, places)
	if err != nil {
		reason := err.Error()
		if err == errAmountPrecision {
			reason = "more decimals than the currency's " + strconv.Itoa(places)
		}
		c.ruleCode(field, reason, codeAmountInvalid)
		return decimal{}, false
	}
	return d, true
}

// checkInteger checks a JSON integer member within lo..hi.
func (c *checks) checkInteger(field, text string, lo, hi int64) (int64, bool) {
	n, err := strconv.ParseInt(text, 10, 64)
	switch {
	case err != nil, n < lo:
		c.rule(field, "want an integer of at least "+strconv.FormatInt(lo, 10))
		return 0, false
	case n > hi:
		c.rule(field, "want an integer of at most "+strconv.FormatInt(hi, 10))
		return 0, false
	}
	return n, true
}

// parseDate reads a YYYY-MM-DD date (a real one: no 2026-02-30), or
// an RFC 3339 time, which the payment-methods/pix page's example sends.
// It returns the end of the date (its last instant, UTC) as the moment
// the date runs out.
func parseDate(s string) (end time.Time, ok bool) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), true
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil || d.Format(time.DateOnly) != s {
		return time.Time{}, false
	}
	return d.Add(24*time.Hour - time.Second), true
}

// checkURL checks a webhook_url or redirect_url: absolute https, or http
// to a loopback host.
func (c *checks) checkURL(field, s string) {
	u, err := url.Parse(s)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.User != nil:
		c.rule(field, "want an absolute https URL")
	case u.Scheme == "https":
	case u.Scheme == "http" && loopbackHost(u.Hostname()):
	default:
		c.rule(field, "want https (plain http only to a loopback host)")
	}
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// checkEmail checks a payer's e-mail: one @ with text on both sides, no
// white space.
func (c *checks) checkEmail(field, s string) {
	at := strings.IndexByte(s, '@')
	if at <= 0 || at == len(s)-1 || strings.Count(s, "@") != 1 || strings.ContainsAny(s, " \t\r\n") {
		c.rule(field, "want an e-mail address such as payer@example.com")
	}
}

// checkPhone checks a payer's mobile number with its country code: an
// optional leading +, then 8 to 15 digits (E.164's bound), spaces,
// dashes or parentheses between them.
func (c *checks) checkPhone(field, s string) {
	digits := 0
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '+' && i == 0, r == ' ', r == '-', r == '(', r == ')':
		default:
			c.rule(field, "want a mobile number with its country code, such as +5511988887777")
			return
		}
	}
	if digits < 8 || digits > 15 {
		c.rule(field, "want 8 to 15 digits with the country code, such as +5511988887777")
	}
}

// checkID checks an identifier the fake will look up (a wallet or a
// merchant): printable, no white space.
func (c *checks) checkID(field, s string) {
	if strings.ContainsAny(s, " \t\r\n") {
		c.rule(field, "must not hold white space")
	}
}
