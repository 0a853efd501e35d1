package coinepayfake

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/payonce/payonce/internal/fake/fakeserver"
)

// The fake is held to testdata/coinepay/reference.json, the one list of
// Coinepay's wire names the client's tests read too: neither side can
// change a name alone. The fake reads the file on its own (this reader is
// not the client's).

type refField struct {
	Name       string
	Type       string
	Required   bool
	FakeOnly   bool   `json:"fake_only"`
	ClientOnly bool   `json:"client_only"`
	ItemsAs    string `json:"items_as"`
}

type refEndpoint struct {
	Name, Method, Path string
	Keyed              bool
	Request, Query     []refField
	Response           []refField
	ResponseAs         string `json:"response_as"`
}

type reference struct {
	Envelope struct {
		Fields            []refField
		SuccessMessageKey string `json:"success_message_key"`
	}
	Idempotency struct {
		Header          string
		RequiredOn      []string `json:"required_on"`
		MaxLength       int      `json:"max_length"`
		Charset         string
		Window          string
		MaxStoredAnswer int    `json:"max_stored_answer"`
		ReplayHeader    string `json:"replay_header"`
		ReplayValue     string `json:"replay_value"`
	}
	Signing struct {
		Headers                []struct{ Name string }
		TimestampWindowSeconds int `json:"timestamp_window_seconds"`
		NonceWindowSeconds     int `json:"nonce_window_seconds"`
		NonceMinLength         int `json:"nonce_min_length"`
		NonceMaxLength         int `json:"nonce_max_length"`
	}
	Endpoints   []refEndpoint
	Objects     map[string]struct{ Fields []refField }
	MessageKeys []refMessageKey `json:"message_keys"`
}

type refMessageKey struct {
	Key         string
	Status      int
	StatusRange string `json:"status_range"`
	FakeOnly    bool   `json:"fake_only"`
	Data        []refField
}

func loadReference(t *testing.T) reference {
	t.Helper()
	b, err := os.ReadFile("../../../testdata/coinepay/reference.json")
	require.NoError(t, err)
	var ref reference
	require.NoError(t, json.Unmarshal(b, &ref))
	require.NotEmpty(t, ref.Endpoints)
	return ref
}

func (ref reference) endpoint(t *testing.T, name string) refEndpoint {
	t.Helper()
	for _, e := range ref.Endpoints {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no endpoint %s in the reference", name)
	return refEndpoint{}
}

// answerFields are the fields of an endpoint's data: its own and those
// of the object it answers as.
func (ref reference) answerFields(e refEndpoint) []refField {
	fields := slices.Clone(e.Response)
	if e.ResponseAs != "" {
		fields = append(fields, ref.Objects[e.ResponseAs].Fields...)
	}
	return fields
}

func names(fields []refField, keep func(refField) bool) []string {
	var out []string
	for _, f := range fields {
		if keep == nil || keep(f) {
			out = append(out, f.Name)
		}
	}
	sort.Strings(out)
	return out
}

func notClientOnly(f refField) bool { return !f.ClientOnly }
func always(f refField) bool        { return !f.FakeOnly && !f.ClientOnly }

// jsonTags returns the JSON names of a struct type's fields, sorted.
func jsonTags(v any) []string {
	var out []string
	typ := reflect.TypeOf(v)
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func TestFakePathsAndMethodsAreTheReferences(t *testing.T) {
	ref := loadReference(t)
	f := New(fakeserver.New(fakeserver.Options{}), Config{})
	paths := map[string]string{"apply": PathApply, "recharge": PathRecharge, "info": PathInfo, "list": PathList}
	require.Len(t, ref.Endpoints, len(paths), "every endpoint of the reference is served, no other")
	var keyed []string
	for _, e := range ref.Endpoints {
		assert.Equal(t, e.Path, paths[e.Name], e.Name)
		rt, p := f.Route(e.Method, e.Path)
		assert.Equal(t, fakeserver.ProblemNone, p, e.Name)
		assert.Equal(t, e.Keyed, rt.Keyed, e.Name)
		assert.True(t, Owns(e.Path), e.Name)
		other := http.MethodGet
		if e.Method == http.MethodGet {
			other = http.MethodPost
		}
		_, p = f.Route(other, e.Path)
		assert.Equal(t, fakeserver.ProblemMethodNotAllowed, p, e.Name)
		if e.Keyed {
			keyed = append(keyed, e.Name)
		}
	}
	assert.ElementsMatch(t, ref.Idempotency.RequiredOn, keyed)
}

func TestFakeRequestNamesAreTheReferences(t *testing.T) {
	ref := loadReference(t)
	assert.Equal(t, names(ref.endpoint(t, "apply").Request, nil), jsonTags(applyRequest{}))
	assert.Equal(t, names(ref.endpoint(t, "recharge").Request, nil), jsonTags(rechargeRequest{}))
	assert.Equal(t, names(ref.endpoint(t, "info").Query, nil), []string{queryCardID})
	assert.Equal(t, names(ref.endpoint(t, "list").Query, nil), []string{queryPage, queryPageSize})

	// What the reference requires, the fake refuses without.
	srv := newWireServer(t)
	for _, name := range []string{"apply", "recharge"} {
		e := ref.endpoint(t, name)
		body := srv.sampleBody(t, e.Request)
		status, env := srv.send(t, e.Method, e.Path, "", name+"-all", body)
		require.Equal(t, http.StatusOK, status, "%s with every field: %v", name, env)
		if name == "apply" {
			srv.cardID = env["data"].(map[string]any)["card_id"].(string)
		}
		for _, field := range e.Request {
			if !field.Required {
				continue
			}
			var m map[string]any
			require.NoError(t, json.Unmarshal(body, &m))
			delete(m, field.Name)
			without, _ := json.Marshal(m)
			status, env := srv.send(t, e.Method, e.Path, "", name+"-without-"+field.Name, without)
			assert.Equal(t, http.StatusBadRequest, status, "%s without %s", name, field.Name)
			assert.Equal(t, KeyInvalidRequest, env["message_key"], "%s without %s", name, field.Name)
		}
	}
	info := ref.endpoint(t, "info")
	status, _ := srv.send(t, info.Method, info.Path, "", "", nil)
	assert.Equal(t, http.StatusBadRequest, status, "info without card_id")
}

func TestFakeAnswersCarryTheReferenceNames(t *testing.T) {
	ref := loadReference(t)
	srv := newWireServer(t)
	apply := ref.endpoint(t, "apply")
	status, env := srv.send(t, apply.Method, apply.Path, "", "wire-apply", srv.sampleBody(t, apply.Request))
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, names(ref.Envelope.Fields, notClientOnly), keysOf(env), "the envelope")
	assert.Equal(t, ref.Envelope.SuccessMessageKey, env["message_key"])
	assert.EqualValues(t, http.StatusOK, env["code"])
	holdsNames(t, ref, ref.answerFields(apply), env["data"], "apply")
	srv.cardID = env["data"].(map[string]any)["card_id"].(string)

	recharge := ref.endpoint(t, "recharge")
	status, env = srv.send(t, recharge.Method, recharge.Path, "", "wire-recharge", srv.sampleBody(t, recharge.Request))
	require.Equal(t, http.StatusOK, status)
	holdsNames(t, ref, ref.answerFields(recharge), env["data"], "recharge")

	info := ref.endpoint(t, "info")
	status, env = srv.send(t, info.Method, info.Path, queryCardID+"="+srv.cardID, "", nil)
	require.Equal(t, http.StatusOK, status)
	holdsNames(t, ref, ref.answerFields(info), env["data"], "info")

	list := ref.endpoint(t, "list")
	status, env = srv.send(t, list.Method, list.Path, queryPage+"=1&"+queryPageSize+"=5", "", nil)
	require.Equal(t, http.StatusOK, status)
	holdsNames(t, ref, ref.answerFields(list), env["data"], "list")
}

var decimalForm = regexp.MustCompile(`^[0-9]+\.[0-9]{2}$`)

// holdsNames checks that data has every field of fields but the fake-only
// ones, no field beyond them, and values of their types.
func holdsNames(t *testing.T, ref reference, fields []refField, data any, what string) {
	t.Helper()
	obj, ok := data.(map[string]any)
	require.True(t, ok, "%s: data is an object: %v", what, data)
	got := keysOf(obj)
	assert.Subset(t, names(fields, notClientOnly), got, "%s answers only names of the reference", what)
	assert.Subset(t, got, names(fields, always), "%s answers every name of the reference", what)
	for _, f := range fields {
		v, present := obj[f.Name]
		if !present {
			continue
		}
		switch f.Type {
		case "decimal":
			s, isString := v.(string)
			assert.True(t, isString && decimalForm.MatchString(s), "%s.%s: a decimal string with two places, got %#v", what, f.Name, v)
		case "time":
			s, _ := v.(string)
			_, err := time.Parse(time.RFC3339Nano, s)
			assert.NoError(t, err, "%s.%s", what, f.Name)
		case "string":
			assert.IsType(t, "", v, "%s.%s", what, f.Name)
		case "integer":
			n, isNumber := v.(float64)
			assert.True(t, isNumber && n == float64(int64(n)), "%s.%s: an integer, got %#v", what, f.Name, v)
		case "array":
			items, isArray := v.([]any)
			require.True(t, isArray, "%s.%s", what, f.Name)
			require.NotEmpty(t, items, "%s.%s", what, f.Name)
			for _, item := range items {
				holdsNames(t, ref, ref.Objects[f.ItemsAs].Fields, item, what+"."+f.Name)
			}
		}
	}
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The message_keys the fake answers are those of the reference, each with
// its status: the engine's problems, the signature failures and the card
// API's own.
func TestFakeMessageKeysAreTheReferences(t *testing.T) {
	ref := loadReference(t)
	got := map[string]int{
		CodeSignatureRequired: http.StatusUnauthorized, CodeAPIKeyInvalid: http.StatusUnauthorized,
		CodeTimestampExpired: http.StatusUnauthorized, CodeNonceReplayed: http.StatusUnauthorized,
		CodeSignatureInvalid: http.StatusUnauthorized, KeyInsufficientBalance: http.StatusBadRequest,
		KeyPackageNotFound: http.StatusBadRequest, KeyInvalidRequest: http.StatusBadRequest, KeyNotFound: http.StatusNotFound,
	}
	f := New(fakeserver.New(fakeserver.Options{}), Config{})
	for p := fakeserver.ProblemKeyRequired; p <= fakeserver.ProblemDuplicateKey; p++ {
		var env struct {
			Code       int    `json:"code"`
			MessageKey string `json:"message_key"`
		}
		resp := f.Problem(p, 0, "")
		require.NoError(t, json.Unmarshal(resp.Body, &env))
		assert.Equal(t, resp.Status, env.Code)
		if s, seen := got[env.MessageKey]; seen && s != resp.Status {
			t.Errorf("%s answered with %d and %d", env.MessageKey, s, resp.Status)
		}
		got[env.MessageKey] = resp.Status
	}
	var want []string
	for _, k := range ref.MessageKeys {
		want = append(want, k.Key)
		status, answered := got[k.Key]
		if !answered {
			continue
		}
		if k.StatusRange == "5xx" {
			assert.True(t, status >= 500 && status <= 599, "%s: %d", k.Key, status)
		} else {
			assert.Equal(t, k.Status, status, k.Key)
		}
	}
	assert.ElementsMatch(t, want, slices.Collect(maps.Keys(got)), "the fake answers every message_key of the reference, no other")
	assert.Equal(t, ref.Envelope.SuccessMessageKey, KeySuccess)

	srv := newWireServer(t)
	require.NoError(t, srv.fake.SetBalance("demo-key", fakeserver.Decimal{}))
	apply := ref.endpoint(t, "apply")
	status, env := srv.send(t, apply.Method, apply.Path, "", "wire-broke", srv.sampleBody(t, apply.Request))
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, KeyInsufficientBalance, env["message_key"])
	for _, k := range ref.MessageKeys {
		if k.Key == KeyInsufficientBalance {
			holdsNames(t, ref, k.Data, env["data"], "insufficient_balance")
		}
	}

	// What the fake answers on the wire, not only its constants.
	info, recharge := ref.endpoint(t, "info"), ref.endpoint(t, "recharge")
	srv.send(t, info.Method, info.Path, queryCardID+"=card_nope", "", nil)
	srv.send(t, recharge.Method, recharge.Path, "", "wire-nope", []byte(`{"card_id":"card_nope","amount":"1.00"}`))
	srv.send(t, recharge.Method, recharge.Path, "", "wire-json", []byte(`{"card_id":`))
	srv.send(t, recharge.Method, recharge.Path, "", "", []byte(`{"card_id":"card_nope","amount":"1.00"}`))
	srv.send(t, recharge.Method, recharge.Path, "", "bad key!", []byte(`{"card_id":"card_nope","amount":"1.00"}`))
	srv.send(t, http.MethodDelete, recharge.Path, "", "", nil)
	srv.send(t, http.MethodGet, "/api/v1/openapi/card/nope", "", "", nil)
	require.NotEmpty(t, srv.seen)
	for key, status := range srv.seen {
		if key == ref.Envelope.SuccessMessageKey {
			continue
		}
		i := slices.IndexFunc(ref.MessageKeys, func(k refMessageKey) bool { return k.Key == key })
		if assert.GreaterOrEqual(t, i, 0, "%s is answered but not in the reference", key) {
			assert.Equal(t, ref.MessageKeys[i].Status, status, key)
		}
	}
	for _, key := range []string{KeyNotFound, "openapi_invalid_json", "openapi_idempotency_key_required",
		"openapi_idempotency_key_invalid_chars", "openapi_method_not_allowed"} {
		assert.Contains(t, srv.seen, key, "exercised")
	}
}

func TestFakeKeyAndSigningRulesAreTheReferences(t *testing.T) {
	ref := loadReference(t)
	idem := ref.Idempotency
	window, err := time.ParseDuration(idem.Window)
	require.NoError(t, err)
	assert.Equal(t, fakeserver.KeyRules{Required: true, MaxLen: idem.MaxLength, Charset: idem.Charset, Window: window}, KeyRules())
	assert.Equal(t, KeyCharset, idem.Charset)
	assert.Equal(t, idem.Header, fakeserver.HeaderIdempotencyKey)
	assert.Equal(t, idem.ReplayHeader, fakeserver.HeaderReplay)
	assert.Equal(t, idem.MaxStoredAnswer, fakeserver.DefaultMaxStoredBody)

	var headers []string
	for _, h := range ref.Signing.Headers {
		headers = append(headers, h.Name)
	}
	assert.Equal(t, headers, []string{HeaderAPIKey, HeaderTimestamp, HeaderNonce, HeaderSignature})
	f := New(fakeserver.New(fakeserver.Options{}), Config{})
	assert.Equal(t, time.Duration(ref.Signing.TimestampWindowSeconds)*time.Second, f.verifier.timestampWindow)
	assert.Equal(t, time.Duration(ref.Signing.NonceWindowSeconds)*time.Second, f.verifier.nonceWindow)

	// nonce lengths, on the verifier itself
	now := time.Unix(1767225600, 0)
	v := newVerifier(map[string]string{"k": "s"}, func() time.Time { return now }, 300*time.Second, 600*time.Second)
	for n, valid := range map[int]bool{ref.Signing.NonceMinLength - 1: false, ref.Signing.NonceMinLength: true,
		ref.Signing.NonceMaxLength: true, ref.Signing.NonceMaxLength + 1: false} {
		req := httptest.NewRequest(http.MethodGet, PathList, nil)
		nonce := strings.Repeat("a", n)
		req.Header.Set(HeaderAPIKey, "k")
		req.Header.Set(HeaderTimestamp, "1767225600")
		req.Header.Set(HeaderNonce, nonce)
		req.Header.Set(HeaderSignature, Signature("s", Canonical(http.MethodGet, PathList, "", "1767225600", nonce, nil)))
		_, code := v.verify(req, nil)
		assert.Equal(t, valid, code == "", "nonce of %d characters", n)
	}

	// a replay carries the replay header with its value
	srv := newWireServer(t)
	apply := ref.endpoint(t, "apply")
	body := srv.sampleBody(t, apply.Request)
	srv.send(t, apply.Method, apply.Path, "", "wire-replay", body)
	status, _ := srv.send(t, apply.Method, apply.Path, "", "wire-replay", body)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, idem.ReplayValue, srv.lastHeader.Get(idem.ReplayHeader))
}

// wireServer is the fake over HTTP with a signing client of its own.
type wireServer struct {
	url        string
	fake       *Fake
	engine     *fakeserver.Engine
	cardID     string
	lastHeader http.Header
	seen       map[string]int // message_key -> status of every answer but a success
}

func newWireServer(t *testing.T) *wireServer {
	t.Helper()
	e := fakeserver.New(fakeserver.Options{})
	f := New(e, Config{})
	srv := httptest.NewServer(f.Handler())
	t.Cleanup(srv.Close)
	return &wireServer{url: srv.URL, fake: f, engine: e, seen: map[string]int{}}
}

// sampleBody is a JSON body with a value of its type for every field.
func (s *wireServer) sampleBody(t *testing.T, fields []refField) []byte {
	t.Helper()
	m := map[string]any{}
	for _, f := range fields {
		switch {
		case f.Name == "card_id":
			m[f.Name] = s.cardID
		case f.Type == "decimal":
			m[f.Name] = "1.25"
		case f.Type == "string":
			m[f.Name] = "v-" + f.Name
		case f.Type == "integer":
			m[f.Name] = 1
		default:
			t.Fatalf("no sample of type %s (%s)", f.Type, f.Name)
		}
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

// send signs and sends a request; it returns the status and the envelope.
func (s *wireServer) send(t *testing.T, method, path, query, key string, body []byte) (int, map[string]any) {
	t.Helper()
	target := s.url + path
	if query != "" {
		target += "?" + query
	}
	req, err := http.NewRequest(method, target, bytes.NewReader(body))
	require.NoError(t, err)
	if key != "" {
		req.Header.Set(fakeserver.HeaderIdempotencyKey, key)
	}
	signRequest(t, req, "demo-key", "demo-secret", body, s.engine.Clock().Now())
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var env map[string]any
	require.NoError(t, json.Unmarshal(b, &env), "%s", b)
	s.lastHeader = resp.Header
	if key, _ := env["message_key"].(string); key != "" {
		s.seen[key] = resp.StatusCode
	}
	return resp.StatusCode, env
}
