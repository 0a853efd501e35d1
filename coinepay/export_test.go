package coinepay

// ProviderForTest is what the client hands the core (provider).
var ProviderForTest = provider
