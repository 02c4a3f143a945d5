package cellmove

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/ledger"
)

// Cell is one cell's database, as the mover sees it: a name the directory
// knows it by and a connection as a user that is a member of gateway_mover.
type Cell struct {
	Name string
	DB   *bun.DB
}

// Mover moves merchants from one cell to another.
type Mover struct {
	From, To Cell
	Dir      Directory
	Log      *slog.Logger
	// BackgroundRounds bounds the copy rounds before the pause: a round
	// copies what arrived during the one before, and the pause copies
	// what arrived during the last. 0: 3.
	BackgroundRounds int
	// RemoveAfter is how long the removal at the source waits after the
	// switch: every router's forwarding cache then sends the merchant's
	// network messages to the target, and one still routed to the source
	// meets the fence (503, repeated) rather than a merchant gone (a
	// clearing answered "not found": chaos move). 0: no wait (a local
	// directory, no router).
	RemoveAfter time.Duration

	shapes []shape // the tables' columns and keys, read by the first round

	// step, tests only, is called before each step with its name; the
	// crash tests cancel the move's context there.
	step func(name string)
}

// Result is what a finished move reports.
type Result struct {
	Merchant int64
	ShopNo   string
	Rows     int64         // rows written into the target, all rounds
	Pause    time.Duration // from the directory's moving to its switch
	Resumed  bool          // the move was found open and resumed
	Head     Head          // the chain's head, equal in both cells
	// The pause's parts, when this run paused: the tail's copy, the
	// verification (heads, counts, audit verify of the merchant).
	Tail, Verify time.Duration
	// The background copy before the pause and the removal after it,
	// when this run made them.
	Copy, Remove time.Duration
	// Declined are the authorizations the router declined 91 during the
	// move's pause, as the source logged them (RecordDecline).
	Declined []Decline
}

func (mv *Mover) log() *slog.Logger {
	if mv.Log == nil {
		return slog.Default()
	}
	return mv.Log
}

func (mv *Mover) at(name string) {
	if mv.step != nil {
		mv.step(name)
	}
}

// Move moves the merchant with shopNo from mv.From to mv.To, or resumes its
// open move there. It returns once the source's rows are removed; on an
// error the move stays recorded in the state it reached, for Move to
// resume or Rollback to undo.
func (mv *Mover) Move(ctx context.Context, shopNo string) (*Result, error) {
	res := &Result{ShopNo: shopNo}
	r, err := openMove(ctx, mv.From.DB, shopNo)
	switch {
	case errors.Is(err, ErrNoMove):
		if r, err = mv.start(ctx, shopNo); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	case r.From != mv.From.Name || r.To != mv.To.Name:
		return nil, fmt.Errorf("cellmove: the open move of %s goes from %s to %s: resume it with those cells, or roll it back", shopNo, r.From, r.To)
	default:
		res.Resumed = true
		mv.log().Info("cellmove: resuming", "shop_no", shopNo, "state", r.State)
	}
	res.Merchant = r.Merchant
	var pauseStart time.Time
	for r.State != StateRemoved {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		switch r.State {
		case StateCopying:
			t0 := time.Now()
			n, err := mv.background(ctx, r)
			res.Rows, res.Copy = res.Rows+n, time.Since(t0)
			if err != nil {
				return nil, err
			}
			mv.at("begin_move")
			pauseStart = time.Now()
			if err := mv.Dir.BeginMove(ctx, shopNo, r.From, r.To); err != nil {
				return nil, fmt.Errorf("cellmove: directory: %w", err)
			}
			mv.at("pause")
			if err := mv.pause(ctx, r); err != nil {
				return nil, err
			}
		case StatePaused:
			t0 := time.Now()
			t1, err := mv.tail(ctx, r, res)
			if err != nil {
				return nil, err
			}
			res.Tail, res.Verify = t1.Sub(t0), time.Since(t1)
			if err := advance(ctx, mv.From.DB, r, StateVerified); err != nil {
				return nil, err
			}
		case StateVerified:
			mv.at("switch")
			if res.Pause, err = mv.switchOver(ctx, r, pauseStart); err != nil {
				return nil, err
			}
		case StateSwitched:
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(mv.RemoveAfter):
			}
			mv.at("remove")
			t0 := time.Now()
			if err := mv.removeSource(ctx, r); err != nil {
				return nil, err
			}
			res.Remove = time.Since(t0)
		default:
			return nil, fmt.Errorf("cellmove: move %d is in state %q", r.ID, r.State)
		}
	}
	if res.Head.Seq == 0 { // resumed past verification: the head it verified
		h, err := readHead(ctx, mv.To.DB, r.Merchant)
		if err != nil {
			return nil, err
		}
		res.Head = h
	}
	if res.Declined, err = declines(ctx, mv.From.DB, shopNo, r.ID); err != nil {
		return nil, fmt.Errorf("cellmove: reading the pause's declines: %w", err)
	}
	return res, nil
}

// tailRounds bounds the tail's rounds in the pause.
const tailRounds = 10

// tail copies what arrived since the last round and verifies the copy;
// it returns when the verification began. A write outside the journal
// that the fence does not hold — a callback's attempt claimed before the
// pause and recorded after the round (chaos move: "delivery_attempts has
// 73 rows of the merchant in a1 and 72 in b2") — makes the counts differ:
// the round is run again, as such writes end within an attempt's time
// (the dispatcher claims nothing of a fenced merchant).
func (mv *Mover) tail(ctx context.Context, r *record, res *Result) (time.Time, error) {
	for i := 1; ; i++ {
		mv.at("tail")
		n, err := mv.copyRound(ctx, r)
		res.Rows += n
		if err != nil {
			return time.Time{}, err
		}
		mv.at("verify")
		t1 := time.Now()
		res.Head, err = mv.verify(ctx, r)
		if err == nil || !errors.Is(err, errRowsDiffer) || i == tailRounds {
			return t1, err
		}
		mv.log().Info("cellmove: rows arrived after the tail round; copying again", "shop_no", r.ShopNo, "error", err.Error())
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(500 * time.Millisecond): // the in-flight write's time to end, bounded by tailRounds
		}
	}
}

// start checks that the merchant may move and records the move.
func (mv *Mover) start(ctx context.Context, shopNo string) (*record, error) {
	if mv.From.Name == mv.To.Name {
		return nil, fmt.Errorf("cellmove: %s is both the source and the target", mv.From.Name)
	}
	var merchant int64
	if err := mv.From.DB.NewRaw("select id from merchants where shop_no = ?", shopNo).Scan(ctx, &merchant); err != nil {
		return nil, fmt.Errorf("cellmove: merchant %s in cell %s: %w", shopNo, mv.From.Name, err)
	}
	if err := mv.preconditions(ctx, merchant, shopNo); err != nil {
		return nil, err
	}
	return startMove(ctx, mv.From.DB, merchant, shopNo, mv.From.Name, mv.To.Name)
}

// background runs the copy rounds before the pause: each copies what the
// one before did not see, until little is left for the pause.
func (mv *Mover) background(ctx context.Context, r *record) (int64, error) {
	rounds := mv.BackgroundRounds
	if rounds <= 0 {
		rounds = 3
	}
	var total int64
	for i := 0; i < rounds; i++ {
		mv.at("copy")
		n, err := mv.copyRound(ctx, r)
		total += n
		if err != nil {
			return total, err
		}
		mv.log().Info("cellmove: background copy", "shop_no", r.ShopNo, "round", i+1, "rows", n)
		if n < 1000 {
			break
		}
	}
	return total, nil
}

// pause sets the fence on the merchant's head at the source, which waits
// for the batches that hold the row, and records the pause in the same
// transaction: from its commit the fence's trigger (sql/0035, made free
// for the unfenced by the cellmove_fenced column) refuses any later batch
// of the merchant at the source.
func (mv *Mover) pause(ctx context.Context, r *record) error {
	return mv.From.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := setFence(ctx, tx, r.Merchant, true); err != nil {
			return err
		}
		if err := forwardCards(ctx, tx, r); err != nil {
			return fmt.Errorf("cellmove: forwarding the cards: %w", err)
		}
		return advance(ctx, tx, r, StatePaused)
	})
}

// setFence sets or clears the fence column of the merchant's head. The
// trigger's WHEN needs old and new fenced, so neither change fires it.
func setFence(ctx context.Context, tx bun.Tx, merchant int64, on bool) error {
	res, err := tx.NewRaw("update ledger_heads set cellmove_fenced = ? where merchant_id = ?", on, merchant).Exec(ctx)
	if err != nil {
		return fmt.Errorf("cellmove: the head's fence: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("cellmove: merchant %d has no head", merchant)
	}
	return nil
}

// copyRound runs one round between the two cells' connections.
func (mv *Mover) copyRound(ctx context.Context, r *record) (int64, error) {
	srcConn, err := mv.From.DB.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer srcConn.Close()
	dstConn, err := mv.To.DB.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer dstConn.Close()
	sp, err := ledger.PgxConn(srcConn)
	if err != nil {
		return 0, err
	}
	dp, err := ledger.PgxConn(dstConn)
	if err != nil {
		return 0, err
	}
	dst, err := begin(ctx, dp, r.Merchant, false)
	if err != nil {
		return 0, err
	}
	defer dst.rollback()
	src, err := begin(ctx, sp, r.Merchant, true)
	if err != nil {
		return 0, err
	}
	defer src.rollback()
	// The arrival is recorded in the round's own transaction: the rows
	// and the record that lets a roll-back remove them commit together.
	if _, err := dp.Exec(ctx, `insert into cellmove_arrivals (merchant_id, shop_no, from_cell, state)
		select $1, $2, $3, 'copying' where not exists (select 1 from cellmove_arrivals where merchant_id = $1 and state = 'copying')`,
		r.Merchant, r.ShopNo, r.From); err != nil {
		return 0, err
	}
	n, err := round(ctx, src, dst, &mv.shapes, mv.at)
	if err != nil {
		return 0, err
	}
	return n, dst.commit(ctx)
}
