package a55

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/payonce/payonce"
)

// A55's hosts, as its pages give them (docs/a55.md, Decisions: where the
// pages disagree on them).
const (
	// SandboxURL is the sandbox API (credentials and quickstart pages).
	SandboxURL = "https://sandbox.api.a55.tech"
	// SandboxTokenURL is the sandbox OAuth2 token endpoint.
	SandboxTokenURL = "https://auth.sandbox.a55.tech/oauth2/token"
	// ProductionURL is the production API of the credentials page.
	ProductionURL = "https://api.a55.tech"
	// ProductionTokenURL is the production token endpoint of the
	// credentials page.
	ProductionTokenURL = "https://auth.a55.tech/oauth2/token"
	// CoreManagerURL is the production API of the authentication,
	// versioning and environment pages and of most code samples.
	CoreManagerURL = "https://core-manager.a55.tech"
	// CoreManagerTokenURL is the Cognito token endpoint of the
	// authentication page, which asks for no scope.
	CoreManagerTokenURL = "https://smart-capital.auth.us-east-1.amazoncognito.com/oauth2/token"
)

// Environment is one of A55's environments: an API base URL with its
// token URL and scope. A55's pages name three production pairs and
// disagree on which is current, so production is never a default: the
// merchant names the one A55 gave the credentials for. Credentials are
// not interchangeable between environments.
type Environment string

// The environments a client may be built for (WithEnvironment).
const (
	// Sandbox is SandboxURL with SandboxTokenURL and scope api/readwrite:
	// no real money, A55's test cards accepted (they fail the Luhn
	// check, which the client then skips). The default.
	Sandbox Environment = "sandbox"
	// Production is ProductionURL with ProductionTokenURL and scope
	// api/readwrite.
	Production Environment = "production"
	// ProductionCoreManager is CoreManagerURL with CoreManagerTokenURL
	// and no scope.
	ProductionCoreManager Environment = "production-core-manager"
)

// Environments lists the environments, sandbox first.
func Environments() []Environment {
	return []Environment{Sandbox, Production, ProductionCoreManager}
}

// BaseURL is the environment's API origin, "" for an unknown one.
func (e Environment) BaseURL() string {
	switch e {
	case Sandbox:
		return SandboxURL
	case Production:
		return ProductionURL
	case ProductionCoreManager:
		return CoreManagerURL
	}
	return ""
}

// TokenURL is the environment's OAuth2 token endpoint, "" for an unknown
// one.
func (e Environment) TokenURL() string {
	switch e {
	case Sandbox:
		return SandboxTokenURL
	case Production:
		return ProductionTokenURL
	case ProductionCoreManager:
		return CoreManagerTokenURL
	}
	return ""
}

// Scope is the scope a token request of the environment asks for, ""
// for none.
func (e Environment) Scope() string {
	switch e {
	case Sandbox, Production:
		return DefaultScope
	}
	return ""
}

// scopes is Scope as Auth.Scopes: nil for none.
func (e Environment) scopes() []string {
	if s := e.Scope(); s != "" {
		return []string{s}
	}
	return []string{}
}

func (e Environment) known() bool { return e.BaseURL() != "" }

// WithEnvironment builds the client for e: its base URL, and, unless
// Auth.TokenURL names another, its token URL and scope. An unknown e is
// refused with payonce.ErrInvalidConfig.
func WithEnvironment(e Environment) payonce.Option {
	if !e.known() {
		return func(*payonce.Client) error {
			return fmt.Errorf("%w: a55: unknown environment %q: want a55.Sandbox, a55.Production or a55.ProductionCoreManager",
				payonce.ErrInvalidConfig, string(e))
		}
	}
	return payonce.WithBaseURL(e.BaseURL())
}

// environmentOf names the environment whose origin baseURL is, after
// normalising the scheme's and host's case, a trailing slash and a
// default port; ok is false for any other URL.
func environmentOf(baseURL string) (Environment, bool) {
	o, ok := originOf(baseURL)
	if !ok {
		return "", false
	}
	for _, e := range Environments() {
		if eo, _ := originOf(e.BaseURL()); eo == o {
			return e, true
		}
	}
	return "", false
}

// originOf is the normalised origin of a base URL with no path, query or
// fragment (a trailing slash aside); ok is false otherwise.
func originOf(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.Trim(u.Path, "/") != "" {
		return "", false
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, true
}

// checkBasePath refuses a base URL that ends in /api/v1, as some of A55's
// pages write the API's address: the client adds the version to every
// path itself.
func checkBasePath(baseURL string) error {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil // the core has checked it
	}
	p := strings.ToLower(strings.TrimRight(u.Path, "/"))
	if strings.HasSuffix(p, "/api/v1") {
		return fmt.Errorf("%w: a55: base URL %s ends in %s: give the origin only (such as %s); the client adds /api/v1/... to every path",
			payonce.ErrInvalidConfig, u.Scheme+"://"+u.Host+u.Path, u.Path, SandboxURL)
	}
	return nil
}
