package a55

// ProviderForTest is what the client hands the core (provider).
var ProviderForTest = provider
