package a55

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
)

// maxChallengeURL bounds a 3DS challenge URL an answer may give.
const maxChallengeURL = 4096

// ChallengeURL returns the 3DS challenge URL (url_3ds, or action_url as
// some pages spell it) of the answer behind err, an error of kind
// ErrThreeDSRequired (or a failed charge) whose answer gave one: redirect
// the payer there; the charge's final status arrives by webhook. ok is
// false when the answer gave none, or one that is not an absolute
// http(s) URL.
func ChallengeURL(err error) (string, bool) {
	var cf *chargeFailure
	if errors.As(err, &cf) && cf.url3DS != "" {
		return cf.url3DS, true
	}
	var c challenge
	if errors.As(err, &c) {
		return string(c), true
	}
	return "", false
}

// challenge is the Err of a 3DS_REQUIRED answer that names no charge but
// gives a challenge URL.
type challenge string

func (challenge) Error() string { return "3DS challenge URL given" } // never the URL: it reaches logs

// challengeOf reads an answer's 3DS challenge URL: url_3ds, else
// action_url, either at the top or inside a general shape's "error"
// object; "" when there is none or it is not an absolute http(s) URL of
// at most maxChallengeURL bytes (a hostile answer's javascript: or
// data: URL never reaches a redirect).
func challengeOf(body []byte) string {
	var v struct {
		URL3DS    string `json:"url_3ds"`
		ActionURL string `json:"action_url"`
		Error     *struct {
			URL3DS    string `json:"url_3ds"`
			ActionURL string `json:"action_url"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	for _, s := range []string{v.URL3DS, v.ActionURL} {
		if ok := validChallenge(s); ok {
			return s
		}
	}
	if v.Error != nil {
		for _, s := range []string{v.Error.URL3DS, v.Error.ActionURL} {
			if ok := validChallenge(s); ok {
				return s
			}
		}
	}
	return ""
}

func validChallenge(s string) bool {
	if s == "" || len(s) > maxChallengeURL || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Host != "" && (u.Scheme == "https" || u.Scheme == "http")
}
