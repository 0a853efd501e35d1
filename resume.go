package payonce

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// resumeTokenPrefix versions the resume token format.
const resumeTokenPrefix = "po1."

// maxResumeToken bounds what ParseResumeToken reads.
const maxResumeToken = 1024

// ResumeToken is what a resume token holds: an operation's key and when the
// key was first used, so that the key-age guard works in any process.
type ResumeToken struct {
	Key     string
	Created time.Time
}

type resumeTokenJSON struct {
	K string `json:"k"`
	T int64  `json:"t"` // Unix nanoseconds
}

// String encodes the token: "po1." and base64url JSON. It is "" for a
// token without a key.
func (t ResumeToken) String() string {
	if t.Key == "" {
		return ""
	}
	b, _ := json.Marshal(resumeTokenJSON{K: t.Key, T: t.Created.UnixNano()})
	return resumeTokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// ResumeToken returns an opaque, storable string holding the operation's
// key and its creation time ("" for an unkeyed call). Pass it back with
// WithResumeToken, in any process, to resume the same operation.
func (m Meta) ResumeToken() string {
	return ResumeToken{Key: m.Key, Created: m.KeyCreated}.String()
}

// ResumeTokenOf returns the resume token of the operation that returned
// err, or "" when err carries no key.
func ResumeTokenOf(err error) string {
	var e *APIError
	if !errors.As(err, &e) || e.Key == "" {
		return ""
	}
	return ResumeToken{Key: e.Key, Created: e.KeyCreated}.String()
}

// ParseResumeToken decodes a token made by Meta.ResumeToken or
// ResumeTokenOf. A malformed token is a *ValidationError
// (ErrInvalidRequest) that never quotes the token.
func ParseResumeToken(s string) (ResumeToken, error) {
	bad := func(reason string) (ResumeToken, error) {
		return ResumeToken{}, invalid(ErrInvalidRequest, "resume token", reason)
	}
	if len(s) > maxResumeToken {
		return bad("too long")
	}
	raw, ok := strings.CutPrefix(s, resumeTokenPrefix)
	if !ok {
		return bad("unknown format or version")
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return bad("not base64url")
	}
	var v resumeTokenJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return bad("not a token")
	}
	if v.K == "" || len(v.K) > 255 || !printable(v.K) {
		return bad("bad key")
	}
	if v.T <= 0 {
		return bad("bad creation time")
	}
	return ResumeToken{Key: v.K, Created: time.Unix(0, v.T).UTC()}, nil
}

// WithResumeToken resumes the operation a resume token describes: its key
// and its creation time. A malformed token, or another key source naming a
// different key in the same call (WithIdempotencyKey, a second token, the
// context's WithKey, WithTaskKey or ResumeContext key) or WithoutKey, is an
// ErrInvalidRequest error before anything is sent; the same key from two
// sources is fine.
func WithResumeToken(token string) CallOption {
	t, err := ParseResumeToken(token)
	return func(o *callOptions) {
		if err != nil {
			o.tokenErr = err
			return
		}
		if o.tokenSet && o.tokenKey != t.Key {
			o.tokenClash = true
		}
		o.tokenKey, o.tokenSet, o.created = t.Key, true, t.Created
	}
}

// WithTaskKey binds the key TaskKey(prefix, taskID) to ctx with the job's
// creation time as the key's creation time: a queue that redelivers the
// job after the provider forgot the key gets ErrKeyExpired, nothing sent,
// instead of a second operation. A zero jobCreated would make every
// redelivery look new: an operation run with the returned context is then
// refused with ErrInvalidRequest, nothing sent.
func WithTaskKey(ctx context.Context, prefix, taskID string, jobCreated time.Time) context.Context {
	if jobCreated.IsZero() {
		return context.WithValue(ctx, keyCtxKey{}, boundKey{key: TaskKey(prefix, taskID),
			err: invalid(ErrInvalidRequest, "job creation time", "zero: WithTaskKey needs the job's creation time")})
	}
	return WithKeyCreatedAt(ctx, TaskKey(prefix, taskID), jobCreated)
}
