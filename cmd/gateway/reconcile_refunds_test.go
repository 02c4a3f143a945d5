package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestReconcileRefundsCommand: `gateway reconcile refunds` exits 0 on a
// file that matches (a quiet day: no refunds, no rows), 1 on a row the
// ledger lacks, 2 on unusable input.
func TestReconcileRefundsCommand(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	dir := t.TempDir()
	header := "# period: 2001-02-03\nmessage_id,card_no,amount,currency,date\n"
	g.wantQuietDay(dir, "refunds", header, "Refund file")
	r := g.run("reconcile", "refunds", "--json", "--file", writeFile(t, dir, "extra.csv", header+"net-1,crd_x,1.00,USD,2001-02-03\n"))
	var rep struct {
		Counts struct {
			MissingInLedger int64 `json:"missing_in_ledger"`
		} `json:"counts"`
		Verdict struct {
			Status int `json:"exitStatus"`
		} `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code() != 1 || rep.Counts.MissingInLedger != 1 || rep.Verdict.Status != 1 {
		t.Errorf("an unknown refund: exit %d, %v\n%s", r.code(), err, r.stdout)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--file", writeFile(t, dir, "latin1.csv", header+"net-\xe9,crd_x,1,USD,2001-02-03\n")}, "refund file, line 3: byte 5 (0xE9) is not UTF-8"},
		{[]string{"--day", "2001-02-03"}, "--file is required"},
		{[]string{"--file", writeFile(t, dir, "noperiod.csv", "message_id,card_no,amount,currency,date\n")}, "states no settlement period"},
		{[]string{"--file", writeFile(t, dir, "header.csv", "# period: 2001-02-03\nmessage_id,amount,currency,date\n")}, "header"},
	} {
		g.wantUnusable(tc.want, append([]string{"reconcile", "refunds"}, tc.args...)...)
	}
}

// reconcileSimulatedRefund: a refund sent by `gateway network refund` (in
// TestNetworkSimulator) is matched by its message id by `gateway
// reconcile refunds` for its day, exit 0 and recorded.
func reconcileSimulatedRefund(t *testing.T, g *gateway, messageID, cardNo, amount, createdAt string) {
	t.Helper()
	day, _, _ := strings.Cut(createdAt, "T")
	file := writeFile(t, t.TempDir(), "refunds.csv", "message_id,card_no,amount,currency,date\n"+
		strings.Join([]string{messageID, cardNo, amount, "USD", day}, ",")+"\n")
	r := g.run("reconcile", "refunds", "--day", day, "--file", file, "--by", "cli:test")
	if r.code() != 0 || !strings.Contains(r.stdout, "Recorded: run") || !strings.Contains(r.stdout, "matched 1,") {
		t.Errorf("reconcile refunds of %s: exit %d\n%s%s", day, r.code(), r.stdout, r.stderr)
	}
}
