package a55fake_test

import (
	stdhtml "html"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/a55fake"
)

// page fetches a page and returns its HTML and CSRF token.
func (h *harness) page(t *testing.T, url string) (html, csrf string, resp *http.Response) {
	t.Helper()
	resp, err := h.srv.Client().Get(url)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	m := regexp.MustCompile(`name="fakepay-csrf" content="([^"]+)"`).FindStringSubmatch(string(b))
	if m != nil {
		csrf = m[1]
	}
	return string(b), csrf, resp
}

// browserPost is a POST as the page's script sends it.
func (h *harness) browserPost(t *testing.T, path, csrf, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", h.srv.URL)
	if csrf != "" {
		req.Header.Set("X-Fakepay-Csrf", csrf)
	}
	resp, err := h.srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// url_3ds is the fake's own challenge page, where one click (its
// script's POST, with the page's CSRF token) completes the challenge;
// charge_payment_url and boleto_url are the payer's page of a PIX or a
// boleto. The pages sit behind the admin guard.
func TestPayerPages(t *testing.T) {
	h := newHarness(t, a55fake.Config{})
	c := h.create(t, chargePath, h.body("credit_card", with(card("4024007153763191"), map[string]any{"threeds_authentication": true,
		"device_info": map[string]any{"ip_address": "192.0.2.1"}, "redirect_url": "https://shop.example/return"})))
	u := c["url_3ds"].(string)
	require.True(t, strings.HasPrefix(u, h.srv.URL+"/_fakepay/a55/3ds/"), u)
	html, csrf, resp := h.page(t, u)
	require.Equal(t, http.StatusOK, resp.StatusCode, html)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/html")
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	assert.NotEmpty(t, csrf)
	for _, ev := range []string{"3ds.completed", "3ds.failed", "3ds.abandoned"} {
		assert.Contains(t, html, `data-event="`+ev+`"`)
	}
	assert.Contains(t, html, `href="https://shop.example/return"`)

	events := "/_fakepay/a55/charges/" + c["charge_uuid"].(string) + "/events"
	assert.Equal(t, http.StatusForbidden, h.browserPost(t, events, "", `{"event":"3ds.completed"}`), "a browser needs the page's token")
	assert.Equal(t, http.StatusOK, h.browserPost(t, events, csrf, `{"event":"3ds.completed"}`))
	st, err := h.f.ChargeState(c["charge_uuid"].(string))
	require.NoError(t, err)
	assert.Equal(t, "confirmed", st.Status)
	html, _, _ = h.page(t, u)
	assert.NotContains(t, html, "data-event=", "nothing left to click")

	pix := h.create(t, chargePath, h.body("pix", nil))
	html, _, resp = h.page(t, pix["charge_payment_url"].(string))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "img-src 'self' data:")
	assert.Contains(t, stdhtml.UnescapeString(html), `src="data:image/png;base64,`+pix["pix_payload"].(map[string]any)["qr_code"].(string))
	assert.Contains(t, html, `data-event="pix.paid"`)
	boleto := h.create(t, chargePath, h.body("boleto", nil))
	html, _, _ = h.page(t, boleto["boleto_url"].(string))
	assert.Contains(t, html, boleto["barcode"].(string))
	assert.Contains(t, html, `data-event="boleto.paid"`)

	for _, bad := range []string{"/_fakepay/a55/3ds/" + pix["charge_uuid"].(string), "/_fakepay/a55/pay/nope", "/_fakepay/a55/3ds/"} {
		_, _, resp := h.page(t, h.srv.URL+bad)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, bad)
	}
	js, _, resp := h.page(t, h.srv.URL+"/_fakepay/a55/page.js")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, js, "X-Fakepay-Csrf")

	// The guard: a Host that is not loopback reaches no page.
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Host = "evil.example"
	resp, err = h.srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}
