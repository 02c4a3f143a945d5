package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/api/client"
	"github.com/paygate/gateway/internal/netclient"
)

func init() {
	countQueries["remittances settled"] = "select count(*) from remittances where tx_id = $1 and status = 'SETTLED'"
}

// TestRailReportsOverCells runs the rail's reports through serve over two
// cells: a remittance minted in b2 carries b2 (rmt_b2…) and its report
// settles it in b2; a report naming no configured cell is answered by the
// home cell exactly as one of a remittance nobody has; a merchant moved
// from a1 to b2 with a remittance in flight has that remittance's later
// report followed to b2. Before the move, a card of a merchant in a
// move's pause is declined 91, and the decline is in its cell's log
// (`cells declines`).
func TestRailReportsOverCells(t *testing.T) {
	t.Parallel()
	g, dbA, dbB := cellsGateway(t)
	g.env["GATEWAY_RAIL_MODE"] = "manual" // in flight until the rail reports
	g.env["GATEWAY_REMIT_SCREENING_DELAY"] = "100ms"
	g.mustRun("cells", "init")
	mA, mB := merchantInCell(g, "a1", "1000.00"), merchantInCell(g, "b2", "1000.00")
	s := g.serve()
	token, err := os.ReadFile(filepath.Join(g.env["GATEWAY_DATA_DIR"], "internal-token"))
	if err != nil {
		t.Fatal(err)
	}
	nc, err := netclient.New(netclient.Config{BaseURL: s.scheme + "://" + s.internalAddr(), Token: strings.TrimSpace(string(token)), HTTPClient: s.client})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	until := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(commandTimeout); !done(); time.Sleep(100 * time.Millisecond) { // polling a condition
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s", what, commandTimeout)
			}
		}
	}
	inFlight := func(m credentials, prefix string) string {
		t.Helper()
		a := s.shopTry("POST", "/shop/remittance/create", m.ShopNo, m.PublicKey, "remit-"+m.ShopNo,
			`{"payer_id":"payer-1","amount":"25.00","currency":"USD","beneficiary":{"name":"Hans Muster GmbH","country":"DE","bank_swift":"COBADEFFXXX","account_no":"DE89370400440532013000"}}`)
		txID, _ := a.data["txId"].(string)
		if a.status != 200 || !strings.HasPrefix(txID, prefix) || len(txID) != 24 {
			t.Fatalf("remittance of %s: %+v, want an id %s…", m.ShopNo, a, prefix)
		}
		until("remittance "+txID+" in flight", func() bool {
			q := s.shopTry("GET", "/shop/remittance/query?txId="+txID, m.ShopNo, m.PublicKey, "", "")
			return q.status == 200 && q.data["status"] == "IN_FLIGHT"
		})
		return txID
	}
	settle := func(msg, txID string) (*netclient.RailReport, error) {
		return nc.RailReport(ctx, netclient.RailReportRequest{MessageID: msg, TxID: txID, Status: "SETTLED"})
	}

	// A report of a b2 remittance settles it in b2, without a lookup.
	txB := inFlight(mB, "rmt_b2")
	if rep, err := settle("rail-b2", txB); err != nil || rep.Status != "SETTLED" {
		t.Fatalf("report of %s: %+v %v", txB, rep, err)
	}
	if count(t, dbB, "remittances", "settled", txB) != 1 {
		t.Errorf("%s is not settled in b2", txB)
	}
	// An id of no configured cell, and one of a1 that nobody has: the
	// same answer, the home cell's remittance not found.
	for _, id := range []string{"rmt_zz000000000000000000", "rmt_a1000000000000000000"} {
		_, err := settle("rail-"+id, id)
		var e *client.Error
		if !errors.As(err, &e) || e.Code != client.CodeRemittanceNotFound || e.Message != "remittance not found" {
			t.Errorf("report of %s: %v, want remittance not found", id, err)
		}
	}

	declinedInPause(t, g, s, dbB, mB)

	// A merchant moved a1 to b2 with a remittance in flight: its report,
	// naming a1, is followed to b2 through a1's forwarding.
	txA := inFlight(mA, "rmt_a1")
	if r := g.run("cells", "move", "--shop-no", mA.ShopNo, "--to", "b2"); r.err != nil {
		t.Fatalf("cells move: %v\n%s", r.err, r.stderr)
	}
	until("the moved merchant's remittance settled by its report", func() bool {
		rep, err := settle("rail-a1", txA)
		return err == nil && rep.Status == "SETTLED"
	})
	if count(t, dbB, "remittances", "settled", txA) != 1 || count(t, dbA, "remittances", "settled", txA) != 0 {
		t.Errorf("%s is not settled in b2 alone", txA)
	}
	s.mustStop()
	auditEachCell(g, dbA, dbB)
}

// merchantInCell creates a USD merchant in cell with a deposit.
func merchantInCell(g *gateway, cell, deposit string) credentials {
	g.t.Helper()
	var m credentials
	if err := json.Unmarshal([]byte(g.mustRun("merchant", "create", "--name", "In "+cell, "--currencies", "USD", "--cell", cell)), &m); err != nil {
		g.t.Fatal(err)
	}
	g.deposit(m.ShopNo, "USD", deposit)
	return m
}

// declinedInPause pauses a card of m (a move's record and its card's
// forwarding without a target, as the mover writes them at the pause, in
// m's cell at url), has the router decline an authorization of it 91, and
// finds that decline in `gateway cells declines`.
func declinedInPause(t *testing.T, g *gateway, s *server, url string, m credentials) {
	t.Helper()
	a := s.shopTry("POST", "/shop/card/create", m.ShopNo, m.PublicKey, "", `{"bin":"453201","currency":"USD","amount":"500.00"}`)
	card, _ := a.data["cardNo"].(string)
	if a.status != 200 {
		t.Fatalf("card create: %+v", a)
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var move int64
	if err := db.QueryRow(`insert into cellmove_moves (merchant_id, shop_no, from_cell, to_cell, state, finished_at)
		select id, shop_no, 'b2', 'a1', 'rolled_back', now() from merchants where shop_no = $1 returning id`, m.ShopNo).Scan(&move); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("insert into cellmove_forwards (id, move_id, to_cell) values ($1, $2, null)", card, move); err != nil {
		t.Fatal(err)
	}
	addr := s.internalAddr()
	var declined string
	for i, deadline := 0, time.Now().Add(commandTimeout); ; i++ {
		declined = fmt.Sprintf("pos-%d", i)
		out := g.mustRun("network", "authorize", "--card-no", card, "--amount", "1.25", "--currency", "USD", "--addr", addr, "--message-id", declined)
		var v struct {
			Code string `json:"code"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		if v.Code == "91" {
			break
		}
		if v.Code != "00" || time.Now().After(deadline) {
			t.Fatalf("a paused card: %s", out)
		}
		time.Sleep(100 * time.Millisecond) // until the router's cache sees the pause: polling
	}
	var got struct {
		Cells map[string][]struct {
			MoveID    int64       `json:"moveId"`
			ShopNo    string      `json:"shopNo"`
			MessageID string      `json:"messageId"`
			CardNo    string      `json:"cardNo"`
			Amount    json.Number `json:"amount"`
			Currency  string      `json:"currency"`
			Code      string      `json:"code"`
		} `json:"cells"`
	}
	out := g.mustRun("cells", "declines", "--shop-no", m.ShopNo)
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	d := got.Cells["b2"]
	if len(d) != 1 || len(got.Cells["a1"]) != 0 || d[0].MoveID != move || d[0].ShopNo != m.ShopNo || d[0].MessageID != declined ||
		d[0].CardNo != card || d[0].Amount.String() != "1.25" || d[0].Currency != "USD" || d[0].Code != "91" {
		t.Errorf("cells declines: %s", out)
	}
	if _, err := db.Exec("delete from cellmove_forwards where id = $1", card); err != nil {
		t.Fatal(err)
	}
}
