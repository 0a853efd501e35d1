package fakeserver

// Credentials returns the credential table of a fake: every extra
// (identifier, secret) pair, then the primary one, which wins over an extra
// pair with the same identifier.
func Credentials(id, secret string, extra [][2]string) map[string]string {
	m := make(map[string]string, 1+len(extra))
	for _, kv := range extra {
		m[kv[0]] = kv[1]
	}
	m[id] = secret
	return m
}
