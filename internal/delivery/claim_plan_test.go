package delivery_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/delivery"
)

// TestClaimProbesOnlyTheEndpointsSecretRow runs the claim's statement under
// EXPLAIN ANALYZE (in a transaction rolled back) and counts the probes of
// the two secret tables: a delivery to endpoint one (the merchant's default
// URL, nearly every delivery) reads webhook_secrets and never
// webhook_endpoints; once another endpoint has deliveries, its row is read
// for them. As plain left joins the claim probed both tables for every
// delivery (bench row 6b, docs/performance.md).
func TestClaimProbesOnlyTheEndpointsSecretRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	c := f.card(t, "")
	if _, err := f.l.Cards.FreezeCard(ctx, f.m.ID, c.CardNo, "", nil); err != nil {
		t.Fatal(err)
	}
	plan := claimPlan(t, f)
	if !probed(t, plan, "webhook_secrets") {
		t.Errorf("endpoint one's deliveries did not read their secret row:\n%s", plan)
	}
	if probed(t, plan, "webhook_endpoints") {
		t.Errorf("deliveries to endpoint one probed webhook_endpoints:\n%s", plan)
	}

	two := newCapturer(t)
	if _, err := f.store.CreateEndpoint(ctx, f.m.ID, delivery.EndpointSpec{URL: ptr(two.srv.URL + "/two")}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.l.Cards.UnfreezeCard(ctx, f.m.ID, c.CardNo, nil); err != nil {
		t.Fatal(err)
	}
	if plan := claimPlan(t, f); !probed(t, plan, "webhook_endpoints") {
		t.Errorf("endpoint two's delivery did not read its endpoint row:\n%s", plan)
	}
}

// claimPlan is the claim's EXPLAIN ANALYZE over everything due, rolled back.
func claimPlan(t *testing.T, f *fixture) string {
	t.Helper()
	ctx := context.Background()
	var lines []string
	err := f.l.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		now := f.clock.Now().Add(time.Minute)
		rows, err := tx.QueryContext(ctx, tx.NewRaw("explain (analyze, costs off, timing off) "+delivery.ClaimSQL,
			now, 100, now.Add(time.Minute)).String())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				return err
			}
			lines = append(lines, l)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// errRollback ends claimPlan's transaction: the claim's update is undone.
var errRollback = errors.New("rolled back")

// probed reports whether the plan's scan of table ran: "(never executed)"
// or loops=0 says it did not.
func probed(t *testing.T, plan, table string) bool {
	t.Helper()
	re := regexp.MustCompile(`Scan using \S+ on ` + table + `\b[^\n]*`)
	m := re.FindAllString(plan, -1)
	if len(m) == 0 {
		t.Fatalf("the claim's plan has no scan of %s:\n%s", table, plan)
	}
	for _, l := range m {
		if !strings.Contains(l, "never executed") && !strings.Contains(l, "loops=0") {
			return true
		}
	}
	return false
}
