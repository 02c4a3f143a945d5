package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// `gateway cells move` moves a merchant between two databases and prints
// the pause; audit verify passes on both after, the merchant is served by
// the target's commands and gone from the source's.
func TestCellsMoveCommand(t *testing.T) {
	t.Parallel()
	a, b := newGateway(t), newGateway(t)
	// One data key for both cells: the merchant's sealed keys move as they are.
	b.env["GATEWAY_DATA_DIR"] = a.env["GATEWAY_DATA_DIR"]
	c := a.createMerchant("Moving shop", "USD")
	a.deposit(c.ShopNo, "USD", "12.34")
	out := a.mustRun("cells", "move", "--from", a.env["DATABASE_URL"], "--to", b.env["DATABASE_URL"],
		"--from-name", "a", "--to-name", "b", "--shop-no", c.ShopNo)
	var res struct {
		ShopNo     string `json:"shopNo"`
		RowsCopied int64  `json:"rowsCopied"`
		Pause      string `json:"pause"`
		HeadSeq    int64  `json:"headSeq"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.ShopNo != c.ShopNo || res.RowsCopied == 0 || res.Pause == "" || res.HeadSeq != 1 {
		t.Fatalf("cells move printed %s (%v)", out, err)
	}
	a.mustRun("audit", "verify")
	b.mustRun("audit", "verify")
	if shown := b.mustRun("merchant", "show", "--shop-no", c.ShopNo); !strings.Contains(shown, "12.34") {
		t.Errorf("the target's merchant show: %s", shown)
	}
	if r := a.run("merchant", "show", "--shop-no", c.ShopNo); r.code() == 0 {
		t.Errorf("the source still shows the merchant: %s", r.stdout)
	}
	// Again: the merchant is no longer in the source.
	if r := a.run("cells", "move", "--from", a.env["DATABASE_URL"], "--to", b.env["DATABASE_URL"], "--shop-no", c.ShopNo); r.code() == 0 {
		t.Errorf("a second move succeeded: %s", r.stdout)
	}
	if r := a.run("cells", "move", "--from", a.env["DATABASE_URL"]); r.code() != 2 {
		t.Errorf("missing flags: exit %d", r.code())
	}
}
