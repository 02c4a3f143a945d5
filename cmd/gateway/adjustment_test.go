package main

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/paygate/gateway/internal/database"
)

// The CLI's maker–checker: a house operator proposes the reversal of a
// wrong deposit, cannot approve it as themself, another approves it once,
// and each step is in the console's audit trail.
func TestAdjustmentCommands(t *testing.T) {
	g := newGateway(t)
	c := g.createMerchant("Acme", "USD")
	g.deposit(c.ShopNo, "USD", "10.00")
	_, wrong := g.deposit(c.ShopNo, "USD", "99.99")

	ctx := context.Background()
	db, err := database.OpenDB(ctx, g.env["DATABASE_URL"], database.DBOptions{ConnsMax: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, login := range []string{"ann.ops", "bob.ops"} {
		if _, err := db.ExecContext(ctx, `insert into console_users (login, role, password_hash, totp_sealed)
			values (?, 'operator', '$argon2id$test', '\x00'::bytea)`, login); err != nil {
			t.Fatal(err)
		}
	}
	g.mustFail("--as", "adjustment", "propose", "--shop-no", c.ShopNo, "--reverses", "2", "--reason", "twice", "--reference", "T1")
	g.mustFail("no enabled house operator", "adjustment", "propose", "--shop-no", c.ShopNo, "--as", "eve", "--reverses", "2",
		"--reason", "twice", "--reference", "T1")
	var p struct {
		ID       int64  `json:"id"`
		Status   string `json:"status"`
		EntrySeq int64  `json:"entrySeq"`
	}
	out := g.mustRun("adjustment", "propose", "--shop-no", c.ShopNo, "--as", "ann.ops", "--reverses", itoa(wrong),
		"--reason", "deposited twice", "--reference", "TICKET-7")
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.Status != "PROPOSED" {
		t.Fatalf("propose printed %q: %v", out, err)
	}
	g.mustFail("maker–checker", "adjustment", "approve", "--shop-no", c.ShopNo, "--as", "ann.ops", "--id", itoa(p.ID))
	out = g.mustRun("adjustment", "approve", "--shop-no", c.ShopNo, "--as", "bob.ops", "--id", itoa(p.ID))
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.Status != "APPROVED" || p.EntrySeq == 0 {
		t.Fatalf("approve printed %q: %v", out, err)
	}
	if bal, _ := g.deposit(c.ShopNo, "USD", "0.01"); bal != "10.01" {
		t.Errorf("balance after the reversal and a cent: %s, want 10.01", bal)
	}
	var steps []string
	rows, err := db.QueryContext(ctx, `select login || ' ' || action || ' ' || outcome from console_audit where address = 'cli' order by id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, s)
	}
	want := []string{"ann.ops adjustment.propose ok", "ann.ops adjustment.approve refused", "bob.ops adjustment.approve ok"}
	if len(steps) != len(want) || steps[0] != want[0] || steps[1] != want[1] || steps[2] != want[2] {
		t.Errorf("audit trail %q, want %q", steps, want)
	}
	g.auditOK()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
