package main

import (
	"errors"
	"fmt"
	"os/exec"

	"github.com/paygate/gateway/tools/internal/harness"
)

// verifyAfter runs `gateway audit verify` once more after every round
// (row V): whatever the scenarios wrote — transfers, creations,
// authorizations, callbacks, the spread's merchants, the rows of every
// round — the journal must still verify when the bench is over (issue 20:
// "audit verify after the bench passes"). Scenario 7 measures the speed;
// this row only the outcome.
func verifyAfter(b *bench) row {
	r := row{Scenario: "V  audit verify after the bench", Target: "the journal verifies", Load: loadavg()}
	if b.gatewayBin == "" || b.db == nil {
		r.Verdict, r.Note = "n/a", "no gateway binary in this run"
		return r
	}
	var entries int64
	if err := b.db.QueryRowContext(b.ctx, `select count(*) from entries`).Scan(&entries); err != nil {
		r.Verdict, r.Note = "ERROR", err.Error()
		return r
	}
	cmd, logPath, closeLog, err := b.auditVerifyCmd("audit-verify-after.log")
	if err != nil {
		r.Verdict, r.Note = "ERROR", err.Error()
		return r
	}
	defer closeLog()
	progress(b.log, "V: gateway audit verify after the bench, %d entries", entries)
	runErr := cmd.Run()
	var exit *exec.ExitError
	switch {
	case runErr == nil:
		r.Verdict, r.Measured = "PASS", fmt.Sprintf("%d entries verify", entries)
	case errors.As(runErr, &exit) && exit.ExitCode() == 1:
		r.Verdict, r.Measured = "MISS", "THE JOURNAL DOES NOT VERIFY"
		r.Note = harness.TailFile(logPath, 3)
	default:
		r.Verdict, r.Note = "ERROR", fmt.Sprintf("audit verify failed: %v: %s", runErr, harness.TailFile(logPath, 3))
	}
	return r
}
