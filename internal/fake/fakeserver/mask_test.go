package fakeserver

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	testPAN = "4111111111111111"
	// testCardNoLuhn is a card number of a sandbox's list that fails the
	// Luhn check: masked when a field names it, kept as a number otherwise.
	testCardNoLuhn = "4000000000000011"
)

func TestTheTestCardsAreWhatTheCasesSay(t *testing.T) {
	require.True(t, luhn([]byte(testPAN)))
	require.False(t, luhn([]byte(testCardNoLuhn)))
	require.True(t, luhn([]byte("378282246310005")))
}

func TestMaskTextCardNumbersByShape(t *testing.T) {
	for in, want := range map[string]string{
		testPAN:                     "************1111",
		"/cards/" + testPAN + "/x":  "/cards/************1111/x",
		"4111 1111 1111 1111":       "************1111",
		"4111-1111-1111-1111":       "************1111",
		"4111.1111.1111.1111":       "************1111",
		"4111 - 1111 - 1111 - 1111": "************1111",
		"card4111111111111111x":     "card************1111x",
		"378282246310005":           "***********0005",
		"4111111111111111123":       "************1111***", // a CVV glued on: none of it shows
		"4111 1111 1111 1111 123":   "************1111 ***",
		"４１１１１１１１１１１１１１１１":                   "************1111", // full-width digits
		"٤١١١١١١١١١١١١١١١":                   "************1111", // Arabic-Indic digits
		"4111\u200b1111\u200b1111\u200b1111": "************1111",
		"12345678901234567890123":            "***********************", // 20 digits or more: whole
	} {
		got := MaskText(in)
		assert.Equal(t, want, got, in)
	}
}

func TestMaskTextKeepsWhatIsNoCard(t *testing.T) {
	for _, in := range []string{
		"",
		"/api/v1/bank/wallet/charge/",
		"/api/v1/bank/wallet/charge/550e8400-e29b-41d4-a716-446655440000/refund/6ba7b810-9dad-11d1-80b4-00c04fd430c8/",
		"12345678-1234-4123-8123-123456789012", // a UUID of digits only
		"4111111111111112",                     // fails Luhn, no card name
		testCardNoLuhn,
		"2026-12-07 18:04:07 and 2026-12-07T18:04:07.123456Z",
		"192.168.100.200:65535",
		"1767225600",
		"order 1234567890123",
		"card_0123456789abcdef01234567",
		"/api/v1/openapi/card/apply",
		"/oauth2/token",
		"/oauth2/token/",
		"the token endpoint answered",
		"basic information",
		"openapi:apply:job-42",
		"100.00 BRL",
	} {
		assert.Equal(t, in, MaskText(in), in)
	}
}

func TestMaskTextByFieldNameLuhnOrNot(t *testing.T) {
	for in, want := range map[string]string{
		"card_number=" + testCardNoLuhn:                    "card_number=************0011",
		"CARD_NUMBER=" + testCardNoLuhn:                    "CARD_NUMBER=************0011",
		"cardNumber: 4000 0000 0000 0011":                  "cardNumber: ************0011",
		`{"card_number":"` + testCardNoLuhn + `"}`:         `{"card_number":"************0011"}`,
		`{"card_number": "` + testCardNoLuhn + `", "x":1}`: `{"card_number": "************0011", "x":1}`,
		`{\"card_number\":\"` + testCardNoLuhn + `\"}`:     `{\"card_number\":\"************0011\"}`,
		"/card_number/" + testCardNoLuhn + "/x":            "/card_number/************0011/x",
		"pan=" + testCardNoLuhn:                            "pan=************0011",
		"payer.card.number=" + testCardNoLuhn:              "payer.card.number=************0011",
		"card_cvv=123&x=1":                                 "card_cvv=***&x=1",
		`"cvv":123,`:                                       `"cvv":***,`,
		"Cvv: 123":                                         "Cvv: ***",
		"cvv 123 given":                                    "cvv *** given",
		"security_code='9876'":                             "security_code='***'",
		"client_secret=s3cr3t-value":                       "client_secret=[REDACTED]",
		`"access_token":"abc.def"`:                         `"access_token":"[REDACTED]"`,
		"refreshToken=abc":                                 "refreshToken=[REDACTED]",
		"X-Signature: 9c836458afec":                        "X-Signature: [REDACTED]",
		"api_key=k-123":                                    "api_key=[REDACTED]",
		"password=hunter2":                                 "password=[REDACTED]",
		"token abcdef12345":                                "token [REDACTED]",
		"Authorization: Bearer abcDEF123456":               "Authorization: [REDACTED]",
		"sent Bearer abcDEF123456 then":                    "sent Bearer [REDACTED] then",
		"https://user:hunter2@api.example/x":               "https://user:[REDACTED]@api.example/x",
	} {
		assert.Equal(t, want, MaskText(in), in)
	}
}

func TestMaskTextJSONWebTokens(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZW1vIn0.c2lnbmF0dXJlLWJ5dGVz"
	assert.Equal(t, "token: [REDACTED] at /x", MaskText("token: "+jwt+" at /x"))
	assert.Equal(t, "got [REDACTED]!", MaskText("got "+jwt+"!"))
}

func TestMaskTextDecodesWhatIsEncoded(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte(testPAN))
	cases := []string{
		"/cards/%34%31%31%31%31%31%31%31%31%31%31%31%31%31%31%31",
		"/cards/" + url.PathEscape(url.PathEscape("4111 1111 1111 1111")),
		"/cards/%2534%2531%2531%2531%2531%2531%2531%2531%2531%2531%2531%2531%2531%2531%2531%2531",
		`/cards/\u0034\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031\u0031`,
		"/cards/&#52;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;&#49;",
		"/cards/" + b64,
		"/cards/" + strings.TrimRight(base64.URLEncoding.EncodeToString([]byte(testPAN)), "="),
		"/cards/x" + b64, // glued to a word: another alignment
		"/cards/" + base64.StdEncoding.EncodeToString([]byte(`{"card_number":"`+testCardNoLuhn+`"}`)),
		"/cards/" + base64.StdEncoding.EncodeToString([]byte(`{"cvv":"123","n":1}`)),
		"/cards/" + hex.EncodeToString([]byte(testPAN)),
		"/cards/" + base64.StdEncoding.EncodeToString([]byte(url.PathEscape(testPAN+" "))),
	}
	for _, in := range cases {
		got := MaskText(in)
		assert.NotContains(t, got, testPAN, in)
		assert.NotContains(t, got, testCardNoLuhn, in)
		assert.NotContains(t, got, `"123"`, in)
		assert.NotEqual(t, in, got, in)
		assert.True(t, strings.HasPrefix(got, "/cards/"), "the rest is kept: %s", got)
	}
	assert.Equal(t, "/cards/************1111", MaskText(cases[0]), "decoded text is shown masked")
	assert.Equal(t, "/cards/[REDACTED]", MaskText(cases[5]), "a base64 run is cut whole")
	assert.Equal(t, "/a%20b/c", MaskText("/a%20b/c"), "an escape hiding nothing stays as sent")
}

func TestMaskJSONByNameAndShape(t *testing.T) {
	in := `{"card":{"number":"` + testCardNoLuhn + `","cvv":"123","holder_name":"T"},"amount":"100.00",` +
		`"client_secret":"s3cr3t","token_type":"Bearer","expires_in":3600,"ok":true,"has_token":false,"none":null,` +
		`"n":4111111111111111,"note":"card 4111 1111 1111 1111","cards":[{"number":"` + testCardNoLuhn + `"}],` +
		`"credentials":{"client_id":"demo-client","client_secret":"s3"},"card_cvv":"","signature":{"v":"x"},` +
		`"card_number":{"a":"1"},"CardNumber":` + testCardNoLuhn + `}`
	got := string(MaskJSON([]byte(in)))
	want := `{"card":{"number":"************0011","cvv":"***","holder_name":"T"},"amount":"100.00",` +
		`"client_secret":"[REDACTED]","token_type":"Bearer","expires_in":3600,"ok":true,"has_token":false,"none":null,` +
		`"n":"************1111","note":"card ************1111","cards":[{"number":"************0011"}],` +
		`"credentials":{"client_id":"demo-client","client_secret":"[REDACTED]"},"card_cvv":"","signature":"[REDACTED]",` +
		`"card_number":"[REDACTED]","CardNumber":"************0011"}`
	assert.Equal(t, want, got)
	assert.True(t, json.Valid([]byte(got)))

	assert.Equal(t, `[1,"a",{"b":[]}]`, string(MaskJSON([]byte(` [1, "a", {"b": []}] `))), "compacted, otherwise kept")
	assert.Equal(t, "not json card_number=************0011", string(MaskJSON([]byte("not json card_number="+testCardNoLuhn))))
	assert.Equal(t, `{"a":1}x`, string(MaskJSON([]byte(`{"a":1}x`))), "trailing bytes: masked as text")
	assert.Equal(t, `{"************1111":1}`, string(MaskJSON([]byte(`{"`+testPAN+`":1}`))), "keys by shape too")
}

func TestClipMaskedMasksBeforeItCuts(t *testing.T) {
	long := strings.Repeat("a", MaxLogField-8) + "/" + testPAN
	got := ClipMasked(long)
	assert.NotContains(t, got, "41111111")
	assert.LessOrEqual(t, len(got), MaxLogField+len("..."))
	huge := strings.Repeat("/"+testPAN, 10000)
	got = ClipMasked(huge)
	assert.NotContains(t, got, testPAN)
	assert.LessOrEqual(t, len(got), MaxLogField+len("..."))
}

func FuzzMaskText(f *testing.F) {
	for _, s := range []string{testPAN, "card_number=" + testCardNoLuhn, "%34%31", `{"cvv":"1"}`, "eyJ.a", "://a:b@", "&#52;", "\\u00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := MaskText(s)
		if standsAlone(s, testPAN) && strings.Contains(got, testPAN) {
			t.Fatalf("card kept: %q -> %q", s, got)
		}
		if j := MaskJSON([]byte(s)); json.Valid([]byte(s)) && !json.Valid(j) {
			t.Fatalf("JSON in, not JSON out: %q -> %q", s, j)
		}
	})
}

// standsAlone reports whether sub is in s with no digit of any script
// glued before or after it: then it is a card number by its shape alone.
func standsAlone(s, sub string) bool {
	for i := strings.Index(s, sub); i >= 0; {
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(sub):])
		_, db := digitValue(before)
		_, da := digitValue(after)
		if !db && !da {
			return true
		}
		next := strings.Index(s[i+1:], sub)
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}

// A text with more encoded runs than one call decodes is not shown past
// the bound: the runs left unread are cut, never shown unread.
func TestMaskTextBoundsItsDecoding(t *testing.T) {
	run := base64.RawStdEncoding.EncodeToString([]byte("ABCDEFGHIJKLMNOP")) // text, nothing to mask
	in := strings.Repeat(run+" ", 2000)
	got := MaskText(in)
	assert.True(t, strings.HasPrefix(got, run+" "+run+" "), "the first runs are read and kept")
	assert.True(t, strings.HasSuffix(got, maskedSecret+" "), "the last ones are past the bound: cut")
	assert.Equal(t, run, MaskText(run))
}

func BenchmarkMaskTextPath(b *testing.B) {
	p := "/api/v1/bank/wallet/charge/550e8400-e29b-41d4-a716-446655440000/refund/6ba7b810-9dad-11d1-80b4-00c04fd430c8/"
	for b.Loop() {
		_ = ClipMasked(p)
	}
}

func BenchmarkMaskTextHostile(b *testing.B) {
	s := strings.Repeat("%25"+base64.StdEncoding.EncodeToString([]byte("QUJDREVGR0hJSktMTU5PUA1 ")), 1<<12)
	for b.Loop() {
		_ = MaskText(s)
	}
}
