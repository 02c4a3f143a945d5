package main

import (
	"encoding/json"
	"testing"
	"time"
)

// audit close: a merchant's ended day is closed and signed once; a day not
// over, a second close and bad flags are refused, naming why; the journal
// still verifies with the close.
func TestAuditCloseCommand(t *testing.T) {
	t.Parallel()
	g, c := newShopGateway(t, "Close shop", "USD", "USD 10.00")
	key := g.checkpointKey(t.TempDir())
	g.mustFail("no checkpoint key", "audit", "close", "--shop-no", c.ShopNo, "--day", "2026-01-01")
	g.env["GATEWAY_CHECKPOINT_KEY_FILE"] = key

	now := time.Now().UTC()
	yesterday, today := now.AddDate(0, 0, -1).Format("2006-01-02"), now.Format("2006-01-02")
	var closed struct {
		Merchant  int64
		Kind      string
		Start     string
		HeadSeq   int64
		Signature string
	}
	if err := json.Unmarshal([]byte(g.mustRun("audit", "close", "--shop-no", c.ShopNo, "--day", yesterday)), &closed); err != nil {
		t.Fatal(err)
	}
	if closed.Kind != "day" || closed.Start != yesterday || closed.HeadSeq != 0 || len(closed.Signature) != 128 {
		t.Errorf("the close of %s: %+v", yesterday, closed)
	}
	g.mustFail("closed already", "audit", "close", "--shop-no", c.ShopNo, "--day", yesterday)
	g.mustFail("can be closed only after it has ended", "audit", "close", "--shop-no", c.ShopNo, "--day", today)
	g.mustFail("give one of --period", "audit", "close", "--shop-no", c.ShopNo, "--day", today, "--period", "2026-11")
	g.mustFail("--day:", "audit", "close", "--shop-no", c.ShopNo, "--day", "2026-13-01")
	g.mustFail("--period:", "audit", "close", "--shop-no", c.ShopNo, "--period", "November")
	g.mustFail("--shop-no is required", "audit", "close", "--day", yesterday)
	g.mustRun("audit", "verify", "--public-key", key+".pub")
}
