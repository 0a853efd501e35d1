package fakeserver

import (
	"context"
	"net/http"
)

// guardKey is the context key of the admin guard that let a request in.
type guardKey struct{}

// withGuard returns r carrying the guard that admitted it, for CSRFToken.
func withGuard(r *http.Request, g *adminGuard) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), guardKey{}, g))
}

// CSRFToken returns a fresh CSRF token for a page a provider's admin
// handler (AdminConfig.Provider) serves under the admin API: the page's
// script sends it in HeaderCSRF, as the console's does, so that its
// state-changing calls pass the guard. It returns "" for a request the
// guard did not admit.
func CSRFToken(r *http.Request) string {
	g, _ := r.Context().Value(guardKey{}).(*adminGuard)
	if g == nil {
		return ""
	}
	return g.csrfToken()
}
