package payonce

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/payonce/payonce/internal/loopback"
)

// ErrRedirectRefused: the server answered an API call with a redirect the
// client does not follow (to another origin, one that would change the
// method or drop the body, one to plain http://, or too many). It is never
// retried in the call. A 307/308 (or any redirect of a GET or HEAD without
// a body) means the server did not execute the request: the error is final
// and IsTemporary reports false. A 301/302/303 answering a request with a
// body or another method (a POST) usually means the request ran
// (IsResumable reports true): the outcome is unknown, the error is
// temporary and resumable with the same key.
var ErrRedirectRefused = newKind("redirect_refused", "redirect refused")

// errRedirectRan marks a refused redirect whose request may have run (a
// 301/302/303 answering a POST): it is not final for its key.
var errRedirectRan = errors.New("the redirected request may have run")

// redirectError says why a redirect was refused. It unwraps to
// ErrRedirectRefused and, when MayHaveRun, errRedirectRan. It never holds the target's path or query string,
// only its origin.
type redirectError struct {
	StatusCode int    // the redirect status, e.g. 307
	Method     string // the method of the request that was redirected
	Target     string // the target's origin (scheme://host[:port]), "" when unknown
	Reason     string // why it was refused, e.g. "to another origin", "not followed"
	// MayHaveRun is true for a 301/302/303 answering a request with a body
	// or a method other than GET and HEAD: the server usually ran it, so
	// the operation must be resumed with its key, never run with a new one.
	MayHaveRun bool
}

// Error says why and names the target's origin; the status is in the
// *APIError that carries it.
func (e *redirectError) Error() string {
	msg := "redirect " + e.Reason
	if e.Target != "" {
		msg += " (" + e.Target + ")"
	}
	return msg
}

// Unwrap returns ErrRedirectRefused and, for a request that may have run,
// errRedirectRan (which the providers' codecs read).
func (e *redirectError) Unwrap() []error {
	if e.MayHaveRun {
		return []error{ErrRedirectRefused, errRedirectRan}
	}
	return []error{ErrRedirectRefused}
}

// mayHaveRun reports whether a redirect with this status, answering a
// request with this method and body, likely means the request ran: a
// 301/302/303 to anything but a body-less GET or HEAD.
func mayHaveRun(status int, method string, hasBody bool) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther:
		return hasBody || (method != http.MethodGet && method != http.MethodHead)
	}
	return false
}

// maxRedirects is how many same-origin hops one attempt may follow.
const maxRedirects = 10

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// sameOrigin reports whether u has the scheme, host and port of the
// client's base URL: only such requests are ever signed.
func (c *Client) sameOrigin(u *url.URL) bool {
	b := c.baseURL
	if u.Host == b.Host && u.Scheme == b.Scheme {
		return true // every attempt's own URL, built from the base URL
	}
	return strings.EqualFold(u.Scheme, b.Scheme) && strings.EqualFold(u.Hostname(), b.Hostname()) && portOf(u) == portOf(b)
}

// checkRedirect decides on each redirect hop of an attempt. A payment API
// call follows a redirect only when it stays on the configured origin and
// keeps the method and body (a 307 or 308, or a 301/302/303 of a GET or
// HEAD without a body); anything else ends the operation with a
// *redirectError. After those checks next (the http.Client's own
// CheckRedirect) decides, or the limit of 10 hops. It is the
// CheckRedirect of the client's attempt http.Client; the operation is the
// request context's.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	op, next := operationFrom(req.Context()), c.httpClient.CheckRedirect
	status := 0
	if req.Response != nil {
		status = req.Response.StatusCode
	}
	first := via[0]
	refuse := func(reason string) error {
		return &stopError{err: &redirectError{StatusCode: status, Method: first.Method, Target: req.URL.Scheme + "://" + req.URL.Host,
			Reason: reason, MayHaveRun: mayHaveRun(status, first.Method, len(op.body) > 0)}}
	}
	switch {
	case req.URL.Scheme != "https" && !c.allowInsecure && !loopback.Host(req.URL.Hostname()):
		return refuse("to plain http://")
	case !c.sameOrigin(req.URL):
		return refuse("to another origin")
	case req.Method != first.Method || (len(op.body) > 0 && (status == http.StatusMovedPermanently ||
		status == http.StatusFound || status == http.StatusSeeOther)) ||
		(first.Method != http.MethodGet && first.Method != http.MethodHead && status != http.StatusTemporaryRedirect &&
			status != http.StatusPermanentRedirect):
		return refuse("that would change the method or drop the body")
	}
	if next != nil {
		if err := next(req, via); err != nil {
			if errors.Is(err, http.ErrUseLastResponse) {
				return err
			}
			return refuse("by the http.Client's CheckRedirect")
		}
		return nil
	}
	if len(via) >= maxRedirects {
		return refuse(fmt.Sprintf("after %d redirects", maxRedirects))
	}
	return nil
}

// unfollowed is the error of a final 3xx answer (other than a 304 to a
// conditional request): a redirect the http.Client did not follow.
func unfollowed(method string, hasBody bool, resp *http.Response) *redirectError {
	e := &redirectError{StatusCode: resp.StatusCode, Method: method, Reason: "not followed",
		MayHaveRun: mayHaveRun(resp.StatusCode, method, hasBody)}
	if resp.StatusCode == http.StatusNotModified {
		e.Reason = "not followed: 304 answer to a request without If-None-Match or If-Modified-Since"
	}
	if loc, err := resp.Location(); err == nil {
		e.Target = loc.Scheme + "://" + loc.Host
	}
	return e
}

// badLocation refuses a redirect whose Location cannot be parsed before
// the http.Client sees it: net/http would put the raw Location, query
// string included, in its error, and the failure would look like a
// transport error worth retrying.
func badLocation(req *http.Request, hasBody bool, resp *http.Response) *redirectError {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return nil
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return nil
	}
	if _, err := req.URL.Parse(loc); err != nil {
		return &redirectError{StatusCode: resp.StatusCode, Method: req.Method, Reason: "with a Location that cannot be parsed",
			MayHaveRun: mayHaveRun(resp.StatusCode, req.Method, hasBody)}
	}
	return nil
}
