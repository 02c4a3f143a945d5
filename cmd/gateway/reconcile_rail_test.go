package main

import (
	"strings"
	"testing"
)

// TestReconcileRailCommand: `gateway reconcile rail` exits 0 on a report
// that matches (a quiet day: no settlements, no rows), 1 on a row the
// ledger lacks, 2 on unusable input.
func TestReconcileRailCommand(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	dir := t.TempDir()
	write := func(name, body string) string { return writeFile(t, dir, name, body) }
	header := "# period: 2001-02-03\ntx_id,status,amount,fee,currency,date\n"
	g.wantQuietDay(dir, "rail", header, "Rail report")
	r := g.run("reconcile", "rail", "--file", write("extra.csv", header+"rmt_00000000000000000000,SETTLED,1.00,0.10,USD,2001-02-03\n"))
	if r.code() != 1 || !strings.Contains(r.stdout, "missing_in_ledger") || !strings.Contains(r.stdout, "no such remittance") {
		t.Errorf("an unknown remittance: exit %d\n%s", r.code(), r.stdout)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--file", write("latin1.csv", header+"rmt_\xe9,SETTLED,1,0,USD,2001-02-03\n")}, "rail report, line 3: byte 5 (0xE9) is not UTF-8"},
		{[]string{"--day", "2001-02-03"}, "--file is required"},
		{[]string{"--file", write("noperiod.csv", "tx_id,status,amount,fee,currency,date\n")}, "states no settlement period"},
	} {
		g.wantUnusable(tc.want, append([]string{"reconcile", "rail"}, tc.args...)...)
	}
}
