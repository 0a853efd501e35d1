package payoncetest

// WithDocumentedAnswers starts the fake answering as the provider
// documents: no answer carries the Idempotency-Key of the request that
// made a resource (an A55 charge, a Coinepay card), which the fakes
// otherwise add as an extension, and an A55 list ignores the fake's
// filter by key. A settle lookup then meets what it meets against the
// real providers: two operations with the same request look alike.
func WithDocumentedAnswers() Option {
	return func(s *settings) { s.engine.DocumentedAnswers = true }
}

// SetDocumentedAnswers turns the documented-answers mode
// (WithDocumentedAnswers) on or off while the fake runs.
func (f *Fake) SetDocumentedAnswers(on bool) { f.engine.SetDocumentedAnswers(on) }
