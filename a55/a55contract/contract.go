// Package a55contract holds what A55's contract tests need to run against
// A55's sandbox as well as against the payonce fake: the sandbox's
// account, read from the environment, and a client for it.
//
// The contract tests (this package's tests) run every endpoint, field,
// status and code of docs/a55.md's table against the fake always, and
// against the sandbox when its credentials are in the environment:
//
//	A55_SANDBOX_CLIENT_ID=... A55_SANDBOX_CLIENT_SECRET=... \
//	A55_SANDBOX_MERCHANT_ID=... A55_SANDBOX_WALLET_UUID=... \
//	go test -count=1 -v ./a55/a55contract/
//
// Without them the tests talk to loopback only, and one test says in one
// line that the sandbox was skipped.
package a55contract

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/payonce/payonce"
	"github.com/payonce/payonce/a55"
)

// The environment variables of the sandbox. The first four are required
// together; the rest are optional.
const (
	EnvClientID   = "A55_SANDBOX_CLIENT_ID"
	EnvSecret     = "A55_SANDBOX_CLIENT_SECRET"
	EnvMerchantID = "A55_SANDBOX_MERCHANT_ID"
	EnvWalletUUID = "A55_SANDBOX_WALLET_UUID"

	// EnvEntityUUID is the account's entity: creating a wallet needs it.
	EnvEntityUUID = "A55_SANDBOX_ENTITY_UUID"
	// EnvWebhookSecret signs the sandbox's webhooks; with EnvWebhookURL
	// and EnvWebhookListen the tests receive and verify one.
	EnvWebhookSecret = "A55_SANDBOX_WEBHOOK_SECRET"
	// EnvWebhookURL is a public https URL that reaches EnvWebhookListen
	// (a tunnel): A55 posts a charge's webhooks there.
	EnvWebhookURL = "A55_SANDBOX_WEBHOOK_URL"
	// EnvWebhookListen is the local address the tests listen on for
	// webhooks, such as 127.0.0.1:8089.
	EnvWebhookListen = "A55_SANDBOX_WEBHOOK_LISTEN"
	// EnvBaseURL replaces the sandbox's API origin (a55.SandboxURL),
	// for an account A55 set up on another one; it then needs
	// EnvTokenURL. Production's origin is refused.
	EnvBaseURL = "A55_SANDBOX_BASE_URL"
	// EnvTokenURL replaces the sandbox's token endpoint
	// (a55.SandboxTokenURL).
	EnvTokenURL = "A55_SANDBOX_TOKEN_URL"
)

// requiredVars are the variables a sandbox run needs.
func requiredVars() []string { return []string{EnvClientID, EnvSecret, EnvMerchantID, EnvWalletUUID} }

// SkipLine is what a run without the sandbox's credentials says, once.
const SkipLine = "A55 sandbox not configured: set " + EnvClientID + ", " + EnvSecret + ", " + EnvMerchantID + " and " +
	EnvWalletUUID + " to run the contract tests against it too (docs/a55.md)"

// ErrSandboxConfig is the error of an environment that names the sandbox
// but not in full, or not safely.
var ErrSandboxConfig = errors.New("a55contract: sandbox configuration")

// Sandbox is an A55 sandbox account as the environment gives it.
type Sandbox struct {
	ClientID     string
	ClientSecret string
	MerchantID   string
	WalletUUID   string
	EntityUUID   string // "": wallets are not created

	WebhookSecret string
	WebhookURL    string
	WebhookListen string

	BaseURL  string // "": a55.SandboxURL
	TokenURL string // "": the environment's
}

// SandboxFromEnv reads the sandbox from getenv (os.Getenv). ok is false
// when none of the required variables is set; a set that is incomplete,
// or a base URL that is production's or not https, is an error wrapping
// ErrSandboxConfig that names what to fix.
func SandboxFromEnv(getenv func(string) string) (s Sandbox, ok bool, err error) {
	s = Sandbox{
		ClientID: getenv(EnvClientID), ClientSecret: getenv(EnvSecret), MerchantID: getenv(EnvMerchantID),
		WalletUUID: getenv(EnvWalletUUID), EntityUUID: getenv(EnvEntityUUID),
		WebhookSecret: getenv(EnvWebhookSecret), WebhookURL: getenv(EnvWebhookURL), WebhookListen: getenv(EnvWebhookListen),
		BaseURL: getenv(EnvBaseURL), TokenURL: getenv(EnvTokenURL),
	}
	required := requiredVars()
	var missing []string
	for _, name := range required {
		if getenv(name) == "" {
			missing = append(missing, name)
		}
	}
	switch {
	case len(missing) == len(required):
		return Sandbox{}, false, nil
	case len(missing) > 0:
		return Sandbox{}, false, fmt.Errorf("%w: also set %s", ErrSandboxConfig, strings.Join(missing, ", "))
	}
	if s.BaseURL != "" {
		u, perr := url.Parse(s.BaseURL)
		switch {
		case perr != nil || u.Scheme != "https" || u.Host == "":
			return Sandbox{}, false, fmt.Errorf("%w: %s must be an https origin", ErrSandboxConfig, EnvBaseURL)
		case strings.EqualFold(u.Hostname(), hostOf(a55.ProductionURL)):
			return Sandbox{}, false, fmt.Errorf("%w: %s is production's origin: the contract tests create charges", ErrSandboxConfig, EnvBaseURL)
		case s.TokenURL == "" && !strings.EqualFold(u.Hostname(), hostOf(a55.SandboxURL)):
			return Sandbox{}, false, fmt.Errorf("%w: %s needs %s", ErrSandboxConfig, EnvBaseURL, EnvTokenURL)
		}
	}
	if (s.WebhookURL == "") != (s.WebhookListen == "") || (s.WebhookURL != "" && s.WebhookSecret == "") {
		return Sandbox{}, false, fmt.Errorf("%w: %s, %s and %s go together", ErrSandboxConfig, EnvWebhookURL, EnvWebhookListen, EnvWebhookSecret)
	}
	return s, true, nil
}

func hostOf(raw string) string {
	u, _ := url.Parse(raw)
	return u.Hostname()
}

// String names the account without its secrets.
func (s Sandbox) String() string {
	return "a55contract.Sandbox{ClientID: " + s.ClientID + ", MerchantID: " + s.MerchantID + ", WalletUUID: " + s.WalletUUID +
		", BaseURL: " + s.baseURL() + "}"
}

// GoString is String, for %#v.
func (s Sandbox) GoString() string { return s.String() }

func (s Sandbox) baseURL() string {
	if s.BaseURL != "" {
		return s.BaseURL
	}
	return a55.SandboxURL
}

// Client returns an a55 client for the sandbox acting for its merchant
// and wallet (a55.Client.WithAccount): the Sandbox environment, or
// BaseURL with TokenURL. opts come last and win.
func (s Sandbox) Client(opts ...payonce.Option) (*a55.Client, error) {
	auth := a55.ClientCredentials(s.ClientID, s.ClientSecret)
	auth.TokenURL = s.TokenURL
	base := []payonce.Option{a55.WithEnvironment(a55.Sandbox)}
	if s.BaseURL != "" {
		base = append(base, payonce.WithBaseURL(s.BaseURL))
	}
	c, err := a55.NewClient(auth, append(base, opts...)...)
	if err != nil {
		return nil, err
	}
	return c.WithAccount(a55.Account{MerchantID: s.MerchantID, WalletUUID: s.WalletUUID}), nil
}
