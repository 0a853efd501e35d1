package payonce

// Route and ReferenceTemplate give the external tests the templates
// observers see.
var (
	Route             = route
	ReferenceTemplate = referenceTemplate
)
