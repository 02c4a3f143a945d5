package cards_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgtest"
	"github.com/paygate/gateway/postings"
)

// A merchant's cards over three days, some frozen or cancelled, beside
// another merchant's: every page of every filter is what a plain SQL filter
// in issue order says, another merchant's cards never appear, and a card
// issued later never moves a page that was read.
func TestListCardsPagesMatchAPlainFilter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day0 := time.Date(2031, 5, 1, 9, 0, 0, 0, time.UTC)
	var clock atomic.Pointer[time.Time]
	set := func(tm time.Time) { clock.Store(&tm) }
	set(day0)
	l := newLedger(t, ledger.Config{Now: func() time.Time { return *clock.Load() }})
	m := newMerchant(t, l, "USD", "EUR")
	other := newMerchant(t, l, "USD")
	deposit(t, l, m.ID, "USD", 1_000_00)
	deposit(t, l, m.ID, "EUR", 1_000_00)
	deposit(t, l, other.ID, "USD", 1_000_00)
	for i := 0; i < 24; i++ {
		set(day0.Add(time.Duration(i) * 3 * time.Hour))
		cur, bin := "USD", "453201"
		if i%3 == 2 {
			cur, bin = "EUR", "453202"
		}
		c, err := l.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: bin, Currency: cur, Amount: int64(i)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		switch i % 5 {
		case 1:
			_, err = l.Cards.FreezeCard(ctx, m.ID, c.CardNo, "test", nil)
		case 3:
			_, err = l.Cards.CancelCard(ctx, m.ID, c.CardNo, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 {
			if _, err := l.Cards.CreateCard(ctx, other.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD", Amount: 1}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	expected := func(f cards.CardFilter) []string {
		var out []string
		err := l.DB().NewRaw(`select card_no from cards where merchant_id = ?
			and (? = '' or status = ?) and (? = '' or currency = ?)
			and (?::timestamptz is null or created_at >= ?) and (?::timestamptz is null or created_at < ?)
			order by created_at, card_no`, m.ID, f.Status, f.Status, f.Currency, f.Currency,
			nullable(f.CreatedFrom), nullable(f.CreatedFrom), nullable(f.CreatedTo), nullable(f.CreatedTo)).Scan(ctx, &out)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	filters := []cards.CardFilter{
		{},
		{Status: cards.CardActive},
		{Status: cards.CardFrozen, Currency: "USD"},
		{Currency: "EUR"},
		{CreatedFrom: day0.AddDate(0, 0, 1), CreatedTo: day0.AddDate(0, 0, 2)},
		{Status: cards.CardCancelled, CreatedFrom: day0.AddDate(0, 0, 1)},
		{Currency: "GBP"},
		{CreatedTo: day0},
	}
	for _, f := range filters {
		want := expected(f)
		for _, size := range []int{1, 4, 7, cards.ListPageMax} {
			pages := (len(want) + size - 1) / size
			for page := 1; page <= pages+1; page++ {
				p, err := l.Cards.ListCards(ctx, m.ID, f, page, size)
				if err != nil {
					t.Fatalf("ListCards(%+v, %d, %d): %v", f, page, size, err)
				}
				if p.Total != int64(len(want)) {
					t.Fatalf("%+v: total %d, want %d", f, p.Total, len(want))
				}
				lo, hi := min((page-1)*size, len(want)), min(page*size, len(want))
				var got []string
				for _, c := range p.Cards {
					if c.MerchantID != m.ID {
						t.Fatalf("another merchant's card %s in the list", c.CardNo)
					}
					got = append(got, c.CardNo)
				}
				if !slices.Equal(got, want[lo:hi]) {
					t.Fatalf("%+v page %d size %d: %v, want %v", f, page, size, got, want[lo:hi])
				}
			}
		}
	}
	if len(expected(cards.CardFilter{})) != 24 {
		t.Fatal("the merchant does not have its 24 cards")
	}

	// A card issued later lands after the last page; the pages read stay.
	before, err := l.Cards.ListCards(ctx, m.ID, cards.CardFilter{}, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	set(day0) // even with an earlier clock, it comes last
	if _, err := l.Cards.CreateCard(ctx, m.ID, cards.CreateCardInput{Bin: "453201", Currency: "USD"}, nil); err != nil {
		t.Fatal(err)
	}
	after, err := l.Cards.ListCards(ctx, m.ID, cards.CardFilter{}, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(before.Cards)
	a, _ := json.Marshal(after.Cards)
	if after.Total != before.Total+1 || string(a) != string(b) {
		t.Errorf("a new card moved page 2: total %d → %d", before.Total, after.Total)
	}

	for _, c := range []struct {
		page, size int
		field      string
	}{{0, 10, "page"}, {1, 0, "size"}, {1, cards.ListPageMax + 1, "size"}} {
		_, err := l.Cards.ListCards(ctx, m.ID, cards.CardFilter{}, c.page, c.size)
		if e := postings.AsError(err); e == nil || e.Code != postings.EINVALID || e.Field != c.field {
			t.Errorf("page %d size %d: %v", c.page, c.size, err)
		}
	}
	mustVerify(t, l)
}

func nullable(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// TestCardListPlansReadTheIndexAlone prepares the card list's statements as
// the gateway does (one generic plan per connection) on an empty, never
// analysed database: each reads cards_list_idx alone, in list_seq order,
// with no sort — so page N skips index entries, never table rows.
func TestCardListPlansReadTheIndexAlone(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDB(t)
	ctx := context.Background()
	conn, err := db.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `set plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	for i, q := range cards.CardListSQL {
		name := fmt.Sprintf("card_list_%d", i)
		if _, err := conn.ExecContext(ctx, "prepare "+name+" as "+q); err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
		args := []string{"1", "'ACTIVE'", "'USD'", "null", "null", "1000", "50"}
		if !strings.Contains(q, "$6") {
			args = args[:5]
		}
		rows, err := conn.QueryContext(ctx, "explain (costs off) execute "+name+"("+strings.Join(args, ", ")+")")
		if err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
		var plan string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan += line + "\n"
		}
		rows.Close()
		if !strings.Contains(plan, "Index Only Scan using cards_list_idx") || strings.Contains(plan, "Sort") {
			t.Errorf("%s does not read cards_list_idx alone, in order:\n%s\n%s", name, plan, q)
		}
	}
}
