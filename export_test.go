package payonce

// Route and ReferenceTemplate give the external tests the templates
// observers see.
var (
	ScopeOf           = scopeOf
	Route             = route
	ReferenceTemplate = referenceTemplate
)

// provider is the Provider c was built with so far.
func (c *Client) providerSoFar() Provider {
	return Provider{Name: c.provider, KeyRules: c.rules, Codec: c.codec, Kinds: c.kinds, FinalKinds: c.finalKinds,
		ScopeIdentity: c.ident.identity, LegacyScopes: c.ident.legacy}
}

// withProviderPart changes one part of the client's Provider, leaving
// the parts an earlier WithProvider set: the tests' clients change their
// codec or key rules on top of a helper's provider.
func withProviderPart(f func(p *Provider)) Option {
	return func(c *Client) error {
		p := c.providerSoFar()
		f(&p)
		return WithProvider(p)(c)
	}
}

// WithTestCodec sets the client's Provider.Codec alone.
func WithTestCodec(cd Codec) Option { return withProviderPart(func(p *Provider) { p.Codec = cd }) }

// WithTestKeyRules sets the client's Provider.KeyRules alone.
func WithTestKeyRules(r KeyRules) Option {
	return withProviderPart(func(p *Provider) { p.KeyRules = r })
}

// WithTestProviderName sets the client's Provider.Name alone.
func WithTestProviderName(name string) Option {
	return withProviderPart(func(p *Provider) { p.Name = name })
}

// WithTestScopeIdentity sets the client's Provider.ScopeIdentity alone.
func WithTestScopeIdentity(id string) Option {
	return withProviderPart(func(p *Provider) { p.ScopeIdentity = id })
}

// WithTestLegacyScopes adds to the client's Provider.LegacyScopes.
func WithTestLegacyScopes(scopes ...string) Option {
	return withProviderPart(func(p *Provider) { p.LegacyScopes = append(p.LegacyScopes, scopes...) })
}

// WithTestFinalKinds sets the client's Provider.FinalKinds and Kinds.
func WithTestFinalKinds(kinds, final []error) Option {
	return withProviderPart(func(p *Provider) { p.Kinds, p.FinalKinds = kinds, final })
}
