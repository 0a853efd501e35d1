package coinepay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/payonce/payonce/internal/corekit"

	"github.com/google/uuid"
	"github.com/payonce/payonce"
	"github.com/payonce/payonce/coinepay"
	"github.com/payonce/payonce/internal/devtools/benchpair"
	"github.com/payonce/payonce/internal/devtools/benchwire"
)

// applyBench is one httptest server and two ways of issuing a card on
// it: bare net/http signing by hand (a new key, the JSON body, the nonce,
// timestamp and HMAC headers, the POST, the envelope decoded) and the SDK.
type applyBench struct {
	url    string
	hc     *http.Client
	signer *coinepay.HMACSigner
	c      *coinepay.Client
	core   *payonce.Client // the core client, signing, decoding as bare does
}

func newApplyBench(b *testing.B) *applyBench {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, benchwire.ApplyAnswer)
	}))
	b.Cleanup(srv.Close)
	hc := corekit.DefaultHTTPClient()
	s, err := coinepay.NewHMACSigner("demo-key", "demo-secret")
	if err != nil {
		b.Fatal(err)
	}
	c, err := coinepay.NewClient("demo-key", "demo-secret", payonce.WithBaseURL(srv.URL), payonce.WithHTTPClient(hc))
	if err != nil {
		b.Fatal(err)
	}
	core, err := payonce.NewClient(payonce.WithBaseURL(srv.URL), payonce.WithHTTPClient(hc), payonce.WithSigner(s))
	if err != nil {
		b.Fatal(err)
	}
	return &applyBench{url: srv.URL + coinepay.PathCardApply, hc: hc, signer: s, c: c, core: core}
}

func (ab *applyBench) bare(b *testing.B) {
	key, _ := payonce.NewKey(time.Now(), uuid.NewString())
	body, _ := json.Marshal(&coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, ab.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(corekit.HeaderIdempotencyKey, key.String())
	if err := ab.signer.Sign(req, body); err != nil {
		b.Fatal(err)
	}
	resp, err := ab.hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	var out benchwire.Apply
	err = json.NewDecoder(resp.Body).Decode(&out)
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || out.Data.CardID == "" {
		b.Fatalf("bad answer %d %v", resp.StatusCode, err)
	}
}

// coreDo is the same call through the core client with the same signer,
// decoding as bare does: what the typed client costs over the core is
// sdk's time over this.
func (ab *applyBench) coreDo(b *testing.B) {
	var out benchwire.Apply
	_, err := ab.core.Do(context.Background(), &payonce.Request{Operation: "cards.apply", Method: http.MethodPost,
		Path: coinepay.PathCardApply, Body: &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"}, Keyed: true}, &out)
	if err != nil || out.Data.CardID == "" {
		b.Fatal(err)
	}
}

func (ab *applyBench) sdk(b *testing.B) {
	res, err := ab.c.Cards.Apply(context.Background(), &coinepay.ApplyRequest{HeaderID: "hdr_1", PackageID: "pkg_basic"})
	if err != nil || res.CardID == "" {
		b.Fatal(err)
	}
}

// BenchmarkCardsApply compares one signed card/apply through the SDK with
// the same call done with net/http signing by hand (applyBench), one row
// each, for benchstat's time, bytes and allocations.
func BenchmarkCardsApply(b *testing.B) {
	ab := newApplyBench(b)
	for _, row := range []struct {
		name string
		run  func(*testing.B)
	}{{"bare-signed", ab.bare}, {"core", ab.coreDo}, {"sdk", ab.sdk}} {
		b.Run(row.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				row.run(b)
			}
		})
	}
}

// BenchmarkCardsApplyPaired times each SDK apply next to a bare signed one
// (benchpair.Run): ratio is the SDK's time over bare net/http's;
// sdk-vs-core is the typed client over the core client signing the same
// bytes (what the typed layer costs).
func BenchmarkCardsApplyPaired(b *testing.B) {
	ab := newApplyBench(b)
	b.Run("sdk", func(b *testing.B) { benchpair.Run(b, ab.bare, ab.sdk) })
	b.Run("sdk-vs-core", func(b *testing.B) { benchpair.Run(b, ab.coreDo, ab.sdk) })
}
