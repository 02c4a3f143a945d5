// Command gateway is the merchant gateway: the HTTPS API, the workers, and
// the operator's commands. `gateway --help` lists them.
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
	err := runEnviron(ctx, os.Args, os.Getenv, os.Environ(), os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(exitCode(err))
	}
}
