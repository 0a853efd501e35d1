package coinepay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/internal/corekit"
)

// Raw keeps whatever the server sent; a printed card or recharge must not
// show a card number or CVV it echoed, under any verb, while the caller
// still reads Raw's bytes on purpose.
func TestPrintedRawHidesEchoedCardData(t *testing.T) {
	body := []byte(`{"card_id":"card_1","card_number":"4111111111111111","cvv":"123","balance":"1.00"}`)
	var c Card
	require.NoError(t, json.Unmarshal(body, &c))
	var r Recharge
	require.NoError(t, json.Unmarshal([]byte(`{"card_id":"card_1","amount":"1.00","card_number":"4111111111111111","cvv":"123"}`), &r))
	for _, v := range []any{c, &c, CardResult{Card: c}, r, RechargeResult{Recharge: r}, c.Raw} {
		for _, verb := range []string{"%v", "%+v", "%s", "%q", "%x", "%#v"} {
			out := fmt.Sprintf(verb, v)
			assert.NotContains(t, out, "4111111111111111", verb)
			assert.NotContains(t, out, `"123"`, verb)
			assert.NotContains(t, out, "34 49 50 51 34", verb) // "123" as bytes
			assert.NotContains(t, out, "52 49 49 49", verb)    // "4111" as bytes
			assert.NotContains(t, out, "34313131", verb)       // "4111" in hex
		}
	}
	var m map[string]any
	require.NoError(t, json.Unmarshal(c.Raw, &m), "Raw is still the server's bytes")
	assert.Equal(t, "4111111111111111", m["card_number"])
	assert.Equal(t, "card_1", fmt.Sprint(c.CardID))
}

// The client is held to testdata/coinepay/reference.json, the one list of
// Coinepay's wire names the fake's tests read too: neither side can change
// a name alone. The client reads the file on its own (this reader is not
// the fake's).

type wireRefField struct {
	Name       string
	Type       string
	Required   bool
	FakeOnly   bool   `json:"fake_only"`
	ClientOnly bool   `json:"client_only"`
	ItemsAs    string `json:"items_as"`
}

type wireRefEndpoint struct {
	Name, Method, Path string
	Keyed              bool
	Request, Query     []wireRefField
	Response           []wireRefField
	ResponseAs         string `json:"response_as"`
}

type wireReference struct {
	Envelope    struct{ Fields []wireRefField }
	Idempotency struct {
		Header       string
		MaxLength    int `json:"max_length"`
		Charset      string
		Window       string
		ReplayHeader string `json:"replay_header"`
	}
	Signing struct {
		Headers        []struct{ Name string }
		NonceMinLength int `json:"nonce_min_length"`
		NonceMaxLength int `json:"nonce_max_length"`
	}
	Endpoints   []wireRefEndpoint
	Objects     map[string]struct{ Fields []wireRefField }
	MessageKeys []struct {
		Key      string
		FakeOnly bool `json:"fake_only"`
	} `json:"message_keys"`
}

func loadWireReference(t *testing.T) wireReference {
	t.Helper()
	b, err := os.ReadFile("../testdata/coinepay/reference.json")
	require.NoError(t, err)
	var ref wireReference
	require.NoError(t, json.Unmarshal(b, &ref))
	require.NotEmpty(t, ref.Endpoints)
	return ref
}

func (ref wireReference) endpoint(t *testing.T, name string) wireRefEndpoint {
	t.Helper()
	for _, e := range ref.Endpoints {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no endpoint %s in the reference", name)
	return wireRefEndpoint{}
}

func (ref wireReference) answer(e wireRefEndpoint) []wireRefField {
	fields := slices.Clone(e.Response)
	if e.ResponseAs != "" {
		fields = append(fields, ref.Objects[e.ResponseAs].Fields...)
	}
	return fields
}

func wireNames(fields []wireRefField) []string {
	out := make([]string, 0, len(fields))
	for _, f := range fields {
		out = append(out, f.Name)
	}
	sort.Strings(out)
	return out
}

// wireTags returns the JSON names a struct type reads or writes, those of
// its embedded structs included, sorted.
func wireTags(typ reflect.Type) []string {
	var out []string
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case tag == "" && f.Anonymous && f.Type.Kind() == reflect.Struct:
			out = append(out, wireTags(f.Type)...)
		case tag != "":
			out = append(out, tag)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func TestClientWireNamesAreTheReferences(t *testing.T) {
	ref := loadWireReference(t)
	paths := map[string]string{"apply": PathCardApply, "recharge": PathCardRecharge, "info": PathCardInfo, "list": PathCardList}
	require.Len(t, ref.Endpoints, len(paths))
	for _, e := range ref.Endpoints {
		assert.Equal(t, e.Path, paths[e.Name], e.Name)
	}
	assert.Equal(t, wireNames(ref.endpoint(t, "apply").Request), wireTags(reflect.TypeFor[ApplyRequest]()))
	assert.Equal(t, wireNames(ref.endpoint(t, "recharge").Request), wireTags(reflect.TypeFor[RechargeRequest]()))
	assert.Equal(t, wireNames(ref.Objects["card"].Fields), wireTags(reflect.TypeFor[cardWire]()), "a card")
	assert.Equal(t, wireNames(ref.answer(ref.endpoint(t, "apply"))), wireTags(reflect.TypeFor[applyWire]()), "apply's answer")
	assert.Equal(t, wireNames(ref.answer(ref.endpoint(t, "recharge"))), wireTags(reflect.TypeFor[rechargePlain]()), "recharge's answer")
	assert.Equal(t, wireNames(ref.answer(ref.endpoint(t, "info"))), wireTags(reflect.TypeFor[cardWire]()), "info's answer")
	assert.Equal(t, wireNames(ref.answer(ref.endpoint(t, "list"))), wireTags(reflect.TypeFor[listData]()), "list's answer")
	assert.Equal(t, wireNames(ref.Envelope.Fields), wireTags(reflect.TypeFor[wireEnvelope[Card]]()), "the envelope")
	assert.Equal(t, wireNames(ref.Envelope.Fields), wireTags(reflect.TypeFor[Envelope]()), "the envelope")
	assert.Subset(t, wireNames(ref.endpoint(t, "list").Query), slices.Collect(maps.Keys((&ListOptions{Page: 2, PageSize: 3}).query())))

	var headers []string
	for _, h := range ref.Signing.Headers {
		headers = append(headers, h.Name)
	}
	assert.Equal(t, headers, []string{HeaderAPIKey, HeaderTimestamp, HeaderNonce, HeaderSignature})
	assert.Equal(t, ref.Idempotency.Header, corekit.HeaderIdempotencyKey)
	assert.Equal(t, ref.Idempotency.ReplayHeader, corekit.HeaderReplay)
	window, err := time.ParseDuration(ref.Idempotency.Window)
	require.NoError(t, err)
	rules := keyRules()
	assert.True(t, rules.Required)
	assert.Equal(t, ref.Idempotency.MaxLength, rules.MaxLen)
	assert.Equal(t, ref.Idempotency.Charset, rules.Charset)
	assert.Equal(t, window, rules.Window)

	for _, k := range ref.MessageKeys {
		if !k.FakeOnly {
			assert.NotNil(t, kindForMessageKey(k.Key), "the client knows %s", k.Key)
		}
	}
}

// wireSample gives each answer field of the reference a distinct value of
// its type, so that a field read under another's name shows.
type wireSample map[string]any

func (s wireSample) of(fields []wireRefField, items map[string][]wireRefField) map[string]any {
	out := map[string]any{}
	for _, f := range fields {
		if v, seen := s[f.Name]; seen {
			out[f.Name] = v
			continue
		}
		n := len(s) + 2
		var v any
		switch f.Type {
		case "string":
			v = "v-" + f.Name
		case "decimal":
			v = fmt.Sprintf("%d.%02d", n, n+10)
		case "integer":
			v = n
		case "time":
			v = time.Date(2030, 1, n, 3, 4, 5, 0, time.UTC).Format(time.RFC3339)
		case "array":
			v = []any{s.of(items[f.ItemsAs], items)}
		}
		s[f.Name] = v
		out[f.Name] = v
	}
	return out
}

// The client sends what the reference lists, where it lists it, and reads
// every answer field of the reference into what it models.
func TestClientSpeaksTheReferenceOnTheWire(t *testing.T) {
	ref := loadWireReference(t)
	objects := map[string][]wireRefField{}
	for name, o := range ref.Objects {
		objects[name] = o.Fields
	}
	sample := wireSample{}
	answers := map[string]map[string]any{}
	byPath := map[string]wireRefEndpoint{}
	for _, e := range ref.Endpoints {
		answers[e.Path] = sample.of(ref.answer(e), objects)
		byPath[e.Path] = e
	}
	type seenRequest struct {
		method, path string
		query        url.Values
		header       http.Header
		body         []byte
	}
	var seen []seenRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen = append(seen, seenRequest{r.Method, r.URL.Path, r.URL.Query(), r.Header.Clone(), body})
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"code": 200, "message": "成功", "message_key": "success", "data": answers[r.URL.Path]})
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient("ak_wire", "sk_wire_secret", payonce.WithBaseURL(srv.URL))
	require.NoError(t, err)
	ctx := context.Background()
	amount, err := payonce.ParseAmount("1.25")
	require.NoError(t, err)

	applied, err := c.Cards.Apply(ctx, &ApplyRequest{HeaderID: "h1", PackageID: "p1"})
	require.NoError(t, err)
	recharged, err := c.Cards.Recharge(ctx, &RechargeRequest{CardID: "card_1", Amount: amount})
	require.NoError(t, err)
	info, err := c.Cards.Info(ctx, "card_1")
	require.NoError(t, err)
	page, err := c.Cards.List(ctx, &ListOptions{Page: 2, PageSize: 3})
	require.NoError(t, err)
	require.Len(t, seen, 4, "one request each")

	for _, r := range seen {
		e, known := byPath[r.path]
		require.True(t, known, "%s is a path of the reference", r.path)
		assert.Equal(t, e.Method, r.method, e.Name)
		assert.Equal(t, e.Keyed, r.header.Get(ref.Idempotency.Header) != "", "%s: a key exactly when keyed", e.Name)
		for _, h := range ref.Signing.Headers {
			assert.NotEmpty(t, r.header.Get(h.Name), "%s: %s", e.Name, h.Name)
		}
		nonce := r.header.Get(HeaderNonce)
		assert.True(t, len(nonce) >= ref.Signing.NonceMinLength && len(nonce) <= ref.Signing.NonceMaxLength, "%s: nonce %q", e.Name, nonce)
		if len(e.Request) > 0 {
			var body map[string]any
			require.NoError(t, json.Unmarshal(r.body, &body), e.Name)
			assert.Equal(t, wireNames(e.Request), slices.Sorted(maps.Keys(body)), "%s sends the reference's fields", e.Name)
			for _, f := range e.Request {
				if f.Type == "decimal" {
					assert.Regexp(t, `^[0-9]+\.[0-9]{2}$`, body[f.Name], "%s.%s is a decimal string", e.Name, f.Name)
				}
			}
		} else {
			assert.Empty(t, r.body, e.Name)
		}
		for name := range r.query {
			assert.Contains(t, wireNames(e.Query), name, "%s: query %s", e.Name, name)
		}
		for _, f := range e.Query {
			if f.Required {
				assert.NotEmpty(t, r.query.Get(f.Name), "%s: query %s", e.Name, f.Name)
			}
		}
	}

	str := func(name string) string { return sample[name].(string) }
	dec := func(name string) string { return sample[name].(string) }
	checkCard := func(what string, c Card) {
		assert.Equal(t, str("card_id"), c.CardID, what)
		assert.Equal(t, str("header_id"), c.HeaderID, what)
		assert.Equal(t, str("package_id"), c.PackageID, what)
		assert.Equal(t, str("status"), c.Status, what)
		assert.Equal(t, str("currency"), c.Currency, what)
		assert.Equal(t, dec("balance"), c.Balance.String(), what)
		assert.Equal(t, sample["created_at"], c.CreatedAt.Format(time.RFC3339), what)
		assert.Equal(t, str("idempotency_key"), c.IdempotencyKey, what)
	}
	checkCard("apply", applied.Card)
	assert.Equal(t, dec("fee"), applied.Fee.String())
	assert.Equal(t, dec("account_balance"), applied.AccountBalance.String())
	assert.Equal(t, str("recharge_id"), recharged.RechargeID)
	assert.Equal(t, str("card_id"), recharged.CardID)
	assert.Equal(t, dec("amount"), recharged.Amount.String())
	assert.Equal(t, dec("card_balance"), recharged.CardBalance.String())
	assert.Equal(t, dec("account_balance"), recharged.AccountBalance.String())
	checkCard("info", info.Card)
	require.Len(t, page.Cards, 1)
	checkCard("list", page.Cards[0])
	assert.Equal(t, sample["total"], page.Total)
	assert.Equal(t, sample["page"], page.Page)
	assert.Equal(t, sample["page_size"], page.PageSize)
}
