package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReconcileBankCommand: `gateway reconcile bank` exits 0 on a statement
// that matches the merchant's deposits and records it, 1 on a second
// statement claiming them (another run), and 2 on unusable input, naming
// the line and byte of a Latin-1 file without echoing it.
func TestReconcileBankCommand(t *testing.T) {
	t.Parallel()
	g, c := newShopGateway(t, "Bank shop", "USD,JPY")
	g.deposit(c.ShopNo, "USD", "100.00", "--bank-reference", "SEPA-0001")
	g.deposit(c.ShopNo, "JPY", "1500", "--bank-reference", "SEPA-0002")
	// The deposits' day: run again at the next day's start if midnight
	// passed meanwhile, the period would not hold them.
	day := time.Now().UTC().Format(time.DateOnly)
	dir := t.TempDir()
	write := func(name, body string) string { return writeFile(t, dir, name, body) }
	header := "value_date,amount,currency,reference\n"
	lines := day + ",100.00,USD,SEPA-0001\n" + day + ",1500,JPY,SEPA-0002\n"
	first := write("first.csv", header+lines)

	out := g.mustRun("reconcile", "bank", "--file", first, "--shop-no", c.ShopNo, "--day", day, "--by", "test:finance")
	for _, want := range []string{"Bank statement first.csv", "JPY", "1500", "100.00", "Recorded: run", "MATCHED: "} {
		if !strings.Contains(out, want) {
			t.Errorf("reconcile bank printed no %q:\n%s", want, out)
		}
	}

	second := write("second.csv", "# period: "+day+"\n"+header+lines)
	r := g.run("reconcile", "bank", "--file", second, "--shop-no", c.ShopNo, "--json")
	var rep struct {
		Counts  map[string]int64
		Verdict struct {
			ExitStatus int
			Verdict    string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code() != 1 || rep.Counts["already_reconciled"] != 2 ||
		rep.Verdict.ExitStatus != 1 || rep.Verdict.Verdict != "DISCREPANCIES" {
		t.Errorf("a second statement of the same deposits: exit %d, %+v, %v\n%s", r.code(), rep, err, r.stdout)
	}

	latin1 := write("latin1.csv", header+day+",1.00,USD,caf\xe9\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--file", latin1, "--shop-no", c.ShopNo, "--day", day}, "line 2: byte 24 (0xE9) is not UTF-8"},
		{[]string{"--file", first, "--shop-no", c.ShopNo}, "states no settlement period"},
		{[]string{"--file", first, "--day", day}, "--file and --shop-no are required"},
		{[]string{"--file", first, "--shop-no", "SH0000000000", "--day", day}, "merchant not found"},
		{[]string{"--file", first, "--shop-no", c.ShopNo, "--day", day, "--from", day}, "not both"},
		{[]string{"--file", filepath.Join(dir, "none.csv"), "--shop-no", c.ShopNo, "--day", day}, "no such file"},
	} {
		g.wantUnusable(tc.want, append([]string{"reconcile", "bank"}, tc.args...)...)
	}
}
