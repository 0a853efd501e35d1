package a55fake

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// appendJSON writes what json.Marshal writes of a charge's view, for
// views of every shape: optional members set or not, both PIX spellings,
// strings that encoding/json escapes (HTML, controls, U+2028, bad UTF-8).
func TestChargeViewJSONIsEncodingJSON(t *testing.T) {
	strs := []string{"", "plain", "100.00", "a<b>&c", "quote\"back\\slash", "tab\tnl\n\x01\x7f", "张伟", "line\u2028para\u2029",
		"bad\xffutf8", "https://example.com/hook?a=1&b=2"}
	r := rand.New(rand.NewPCG(7, 8))
	pick := func() string { return strs[r.IntN(len(strs))] }
	m := func() money { return money{decimal{r.Int64N(1e12)}, []int{0, 2}[r.IntN(2)]} }
	for range 3000 {
		v := chargeView{UUID: pick(), WalletUUID: pick(), MerchantID: pick(), Status: pick(), TypeCharge: pick(), Currency: pick(),
			LocalCurrency: m(), Amount: m(), AmountRemaining: m(), InstallmentValue: m(), InstallmentCount: r.IntN(13),
			DueDate: pick(), Description: pick(), TransactionRef: pick(), URL3DS: pick(), PaymentURL: pick(), BoletoURL: pick(),
			Barcode: pick(), CreatedAt: time.Unix(r.Int64N(1<<33), 0).UTC().Format(time.RFC3339Nano), UpdatedAt: pick(), IdempotencyKey: pick()}
		switch r.IntN(3) {
		case 0:
			v.Message = messages{object: true}
		case 1:
			v.Message = messages{list: []ChargeMessage{{Code: pick(), Source: pick(), Description: pick()}, {Code: pick()}}}
		}
		switch r.IntN(4) {
		case 0:
			v.Pix = &pixView{QRCode: pick(), Payload: pick(), ExpirationDate: pick()}
		case 1:
			v.Pix = &pixView{QRCodeBase64: pick(), CopyPaste: pick(), Expiration: pick()}
		case 2:
			v.Pix = &pixView{}
		}
		if r.IntN(2) == 0 {
			v.Subscription = &subscriptionOut{UUID: pick(), Cycle: pick(), Status: pick(), NextChargeDate: pick()}
			if r.IntN(2) == 0 {
				e := pick()
				v.Subscription.EndDate = &e
			}
		}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.appendJSON(nil); string(got) != string(want) {
			t.Fatalf("appendJSON:\n%s\njson.Marshal:\n%s", got, want)
		}
	}
}
