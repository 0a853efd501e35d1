package corekit

import (
	"net/http"
	"time"
)

// HeaderIdempotencyKey is the request header that carries the key.
const HeaderIdempotencyKey = "Idempotency-Key"

// maxResponseHeaderBytes caps the response header bytes the default
// transport reads (net/http allows 10 MB otherwise).
const maxResponseHeaderBytes = 256 << 10

// DefaultHTTPClient returns an http.Client with sane timeouts (60 s in
// all, 10 s for a TLS handshake; no separate wait for the answer's headers,
// which would cap a longer AttemptTimeout or WithCallTimeout), a
// connection pool sized for concurrent payment traffic and response headers
// capped at 256 KiB (net/http's own cap is 10 MB), so a hostile server
// cannot make the client hold megabytes of headers.
func DefaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	t.IdleConnTimeout = 90 * time.Second
	t.TLSHandshakeTimeout = 10 * time.Second
	t.MaxResponseHeaderBytes = maxResponseHeaderBytes
	return &http.Client{Transport: t, Timeout: 60 * time.Second}
}
