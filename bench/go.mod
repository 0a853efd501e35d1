module github.com/payonce/payonce/bench

go 1.26.0

replace github.com/payonce/payonce => ../

tool golang.org/x/perf/cmd/benchstat

require (
	github.com/google/uuid v1.6.0
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/payonce/payonce v0.0.0-00010101000000-000000000000
	github.com/stripe/stripe-go/v85 v85.0.0
)

require (
	github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	golang.org/x/oauth2 v0.38.0 // indirect
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da // indirect
	golang.org/x/time v0.16.0 // indirect
)
