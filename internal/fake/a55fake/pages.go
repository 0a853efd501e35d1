package a55fake

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// The payer's pages a charge's answer points at: the 3DS challenge of
// url_3ds and the PIX or boleto page of charge_payment_url (and
// boleto_url). One click on a page sends its event through the admin
// API, as the console's buttons do; the pages sit behind the same guard.
//
//go:embed pages/*
var pageAssets embed.FS

var pageTemplate = template.Must(template.ParseFS(pageAssets, "pages/page.html"))

// pageCSP is the console's policy, with images from data: URLs (the PIX
// QR code is in the charge as a base64 PNG).
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// pageButton is one event a page offers.
type pageButton struct {
	ID, Event, Label string
}

// pageData is what a page is rendered with.
type pageData struct {
	CSRF, Title, ChargeUUID, Amount, Currency, Description, Status, Expires string
	QR                                                                      template.URL // data:image/png;base64,...
	CopyPaste, Barcode                                                      string
	Redirect                                                                string
	Buttons                                                                 []pageButton
}

// servePage serves the pages and their script; it reports whether rest
// (the path under AdminPrefix) was one of them.
func (f *Fake) servePage(w http.ResponseWriter, r *http.Request, rest string) bool {
	if rest == "page.js" {
		b, _ := pageAssets.ReadFile("pages/page.js")
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(b)
		return true
	}
	kind, id, ok := strings.Cut(rest, "/")
	if !ok || (kind != "3ds" && kind != "pay") || id == "" || strings.Contains(id, "/") {
		return false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeJSON(w, adminError(http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed"))
		return true
	}
	f.mu.Lock()
	c, found := f.charges[id]
	var d pageData
	if found {
		d = f.pageDataLocked(c, kind)
	}
	f.mu.Unlock()
	if !found || (kind == "3ds" && !c.threeDS) || (kind == "pay" && c.pix == nil && c.TypeCharge != typeBoleto) {
		writeJSON(w, adminError(http.StatusNotFound, "not_found", "no such page: unknown charge, or not a "+kind+" charge"))
		return true
	}
	d.CSRF = fakeserver.CSRFToken(r)
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, d); err != nil {
		writeJSON(w, adminError(http.StatusInternalServerError, "internal", "page: "+err.Error()))
		return true
	}
	w.Header().Set("Content-Security-Policy", pageCSP)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store") // the page holds a CSRF token
	_, _ = w.Write(buf.Bytes())
	return true
}

// pageDataLocked fills a page for c; f.mu is held.
func (f *Fake) pageDataLocked(c *charge, kind string) pageData {
	d := pageData{ChargeUUID: c.UUID, Amount: c.Amount.text(c.places()), Currency: c.Currency, Description: c.Description,
		Status: c.Status, Redirect: c.RedirectURL}
	if !c.ExpiresAt.IsZero() {
		d.Expires = c.ExpiresAt.Format(time.RFC3339)
	}
	offer := func(ev Event, label string) {
		for _, a := range allowed(c) {
			if a == ev {
				d.Buttons = append(d.Buttons, pageButton{ID: "ev-" + strings.ReplaceAll(string(ev), ".", "-"), Event: string(ev), Label: label})
			}
		}
	}
	switch {
	case kind == "3ds":
		d.Title = "3DS challenge"
		offer(Event3DSCompleted, "Authenticate")
		offer(Event3DSFailed, "Fail authentication")
		offer(Event3DSAbandoned, "Cancel")
	case c.pix != nil:
		d.Title = "Pay with PIX"
		d.QR = template.URL("data:image/png;base64," + c.pix.qrBase64) // made by the fake: a base64 PNG, nothing else
		d.CopyPaste = c.pix.copyPaste
		offer(EventPixPaid, "Pay")
		offer(EventPixExpired, "Let it expire")
	default:
		d.Title = "Boleto"
		d.Barcode = c.Barcode
		offer(EventBoletoRegistered, "Register at the bank")
		offer(EventBoletoPaid, "Pay")
		offer(EventBoletoExpired, "Let it expire")
	}
	return d
}

func writeJSON(w http.ResponseWriter, resp fakeserver.Response) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
}
