package fakeserver

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"slices"
	"time"
)

// ConsolePath is where the console page is served (the admin prefix itself).
const ConsolePath = AdminPrefix

// consoleAssets are the page's template, script and style sheet: written
// by hand, no build step, served from this origin only.
//
//go:embed console/*
var consoleAssets embed.FS

// consoleCSP is the page's Content-Security-Policy: script and style from
// this origin only (no inline script, no eval), requests to this origin
// only, no frames, no plugins, no forms posting elsewhere.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// consoleHandler serves the console page and its assets and passes every
// other admin path to next.
type consoleHandler struct {
	e     *Engine
	guard *adminGuard
	cfg   AdminConfig
	next  http.Handler
	page  *template.Template
}

// consolePage is what the page template is rendered with.
type consolePage struct {
	CSRF      string
	Providers []string
	Clock     string
	Balance   bool // a Coinepay balance can be set
	Webhooks  bool // the A55 fake's webhooks can be resent
	Release   bool // a held test fake can be released
}

// consoleTemplate parses the page; the template is embedded, so a parse
// failure is a bug caught by every console test.
func consoleTemplate() *template.Template {
	return template.Must(template.ParseFS(consoleAssets, "console/console.html"))
}

func (c *consoleHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var asset, ctype string
	switch r.URL.Path {
	case ConsolePath:
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeAdmin(w, adminError(http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed"))
			return
		}
		c.servePage(w)
		return
	case AdminPrefix + "release":
		c.release(w, r)
		return
	case AdminPrefix + "console/console.js":
		asset, ctype = "console/console.js", "text/javascript; charset=utf-8"
	case AdminPrefix + "console/console.css":
		asset, ctype = "console/console.css", "text/css; charset=utf-8"
	default:
		c.next.ServeHTTP(w, r)
		return
	}
	b, err := consoleAssets.ReadFile(asset)
	if err != nil {
		writeAdmin(w, adminError(http.StatusNotFound, "not_found", "unknown admin path"))
		return
	}
	securityHeaders(w.Header())
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}

func (c *consoleHandler) servePage(w http.ResponseWriter) {
	c.e.mu.Lock()
	providers := slices.Clone(c.e.providers)
	c.e.mu.Unlock()
	slices.Sort(providers)
	data := consolePage{
		CSRF: c.guard.csrfToken(), Providers: slices.Compact(providers),
		Clock:   c.e.clock.Now().UTC().Format(time.RFC3339),
		Balance: c.cfg.SetBalance != nil, Webhooks: c.cfg.Webhooks != nil, Release: c.cfg.Release != nil,
	}
	var buf bytes.Buffer
	if err := c.page.Execute(&buf, data); err != nil {
		writeAdmin(w, adminError(http.StatusInternalServerError, "internal", "console page: "+err.Error()))
		return
	}
	securityHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store") // the page holds a CSRF token
	_, _ = w.Write(buf.Bytes())
}

// release answers POST /_fakepay/release, then ends a held test fake's
// wait: the answer is sent before the fake starts closing.
func (c *consoleHandler) release(w http.ResponseWriter, r *http.Request) {
	switch {
	case c.cfg.Release == nil:
		writeAdmin(w, adminError(http.StatusNotFound, "not_found", "this fake is not held"))
	case r.Method != http.MethodPost:
		writeAdmin(w, adminError(http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed"))
	default:
		w.Header().Set("Connection", "close")
		writeAdmin(w, JSON(http.StatusOK, map[string]any{"released": true}))
		_ = http.NewResponseController(w).Flush()
		c.cfg.Release()
	}
}

// securityHeaders sets the console's strict browser policy.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", consoleCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}
