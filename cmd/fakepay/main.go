// Command fakepay serves fake A55 and Coinepay APIs on one address, with the
// admin API under /_fakepay/, for integration tests written in any
// language.
//
//	fakepay -addr 127.0.0.1:8080 -seed 1 -fault-rate 0.1
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "fakepay:", err)
		os.Exit(1)
	}
}
