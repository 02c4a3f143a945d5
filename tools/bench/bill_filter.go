package main

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/paygate/gateway/api/client"
)

// --- 8: the filtered bill --------------------------------------------------

// billFilterPage is the deep page of scenario 8: 1,000 pages of 50 into the
// filter's matches (49,950 lines before it).
const billFilterPage = 1_000

// scenarioBillFilter reads page 1 and page 1,000 (size 50) of the bill
// merchant's bill filtered by type (FEE_REFUND and REMIT_RETURN, half of its
// lines: billKinds) and currency, over HTTPS: page N must cost about what
// page 1 costs (docs/api.md, "Filters"), p50 at most 2× page 1's.
func scenarioBillFilter(b *bench) ([]row, error) {
	s, err := b.bill()
	if err != nil {
		return nil, err
	}
	today := time.Now().UTC()
	query := func(page int) client.BillQuery {
		return client.BillQuery{StartDate: today.AddDate(0, 0, -1).Format("2006-01-02"),
			EndDate: today.AddDate(0, 0, 1).Format("2006-01-02"), Page: page, Size: 50,
			Types: []string{"FEE_REFUND", "REMIT_RETURN"}, Currency: "USD"}
	}
	const target = "p50 ≤ 2× page 1"
	probe, err := s.shop.Bill(b.ctx, query(1))
	if err != nil {
		return []row{{Scenario: "8  filtered bill, page 1,000 vs page 1", Target: target, Verdict: "n/a",
			Note: fmt.Sprintf("GET /shop/bill/list with type and currency did not answer: %v", err)}}, nil
	}
	deep := billFilterPage
	if probe.Total < int64(deep)*50 {
		deep = max(1, int(probe.Total/50)) // a smaller -entries: the last full page
	}
	conc := max(1, b.o.billConc)
	dur := max(b.o.duration/2, 2*time.Second)
	var rows []row
	var results [2]*runResult
	for k, page := range []int{1, deep} {
		if k == 1 && deep == 1 {
			break
		}
		q := query(page)
		progress(b.log, "8: GET /shop/bill/list?type=FEE_REFUND&type=REMIT_RETURN&currency=USD page %d (size 50), %d clients, %s", page, conc, dur)
		var short, wrong atomic.Int64
		res, err := b.drive(driveSpec{concurrency: conc, duration: dur, warmup: b.o.warmup / 2, profile: fmt.Sprintf("8-bill-filter-page-%d", page), gateway: true,
			op: func(w, _ int) error {
				p, err := s.shop.Bill(b.ctx, q)
				if err != nil {
					return err
				}
				if len(p.List) != 50 {
					short.Add(1)
				}
				for _, l := range p.List {
					if l.Type != "FEE_REFUND" && l.Type != "REMIT_RETURN" {
						wrong.Add(1)
					}
				}
				return nil
			}})
		if err != nil {
			return nil, err
		}
		results[k] = res
		r := gatewayRow(fmt.Sprintf("8%c filtered bill page %d (size 50), %d entries", 'a'+k, page, s.entries), res, nil)
		notes := []string{fmt.Sprintf("type=FEE_REFUND,REMIT_RETURN&currency=USD: %d of the bill's lines; %d concurrent clients", probe.Total, conc)}
		if n := short.Load(); n > 0 {
			notes = append(notes, fmt.Sprintf("%d answers had fewer than 50 lines", n))
		}
		if n := wrong.Load(); n > 0 {
			notes = append(notes, fmt.Sprintf("%d lines of another type: the filter is wrong", n))
		}
		notes = append(notes, res.errorNote())
		r.Note = joinNotes(notes...)
		rows = append(rows, r)
	}
	if results[1] == nil {
		return rows, nil
	}
	last := &rows[len(rows)-1]
	ratio := results[1].p50() / results[0].p50()
	last.Target = target
	last.Measured = fmt.Sprintf("%.2f× (p99 %.2f×)", ratio, results[1].p99()/results[0].p99())
	last.Verdict = verdict(ratio <= 2)
	return rows, nil
}
