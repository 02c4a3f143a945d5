package audit

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// The stored checkpoints and period closes, read back for the console's
// books pages (issue 30): lists newest first, keyset-paged by id (before:
// the last id shown, 0 for the first page; at most BooksPageMax), and one
// checkpoint whole, as the file `audit verify --checkpoint` takes.

// BooksPageMax bounds a page of checkpoints or closes.
const BooksPageMax = 200

// StoredCheckpoint is one stored checkpoint without its heads.
type StoredCheckpoint struct {
	ID        int64     `bun:"id"`
	At        time.Time `bun:"created_at"`
	KeyID     string    `bun:"key_id"`
	TreeSize  int       `bun:"tree_size"`
	RootRaw   []byte    `bun:"root"`
	SigRaw    []byte    `bun:"signature"`
	heads     []byte    `bun:"-"`
	Time      Stamp     `bun:"-"`
	Root      string    `bun:"-"` // 64 hex digits
	Signature string    `bun:"-"` // 128 hex digits
}

func (c *StoredCheckpoint) decode() {
	c.Time, c.Root, c.Signature = Stamp{c.At.UTC()}, hex.EncodeToString(c.RootRaw), hex.EncodeToString(c.SigRaw)
}

// keyset reads "no cursor" as past every id and bounds the page.
func keyset(before int64, limit int) (int64, int) {
	if before <= 0 {
		before = 1<<63 - 1
	}
	return before, min(max(limit, 1), BooksPageMax)
}

// Checkpoints lists the stored checkpoints with an id below before.
func (s *Service) Checkpoints(ctx context.Context, before int64, limit int) ([]StoredCheckpoint, error) {
	before, limit = keyset(before, limit)
	var rows []StoredCheckpoint
	if err := s.l.DB().NewRaw(`select id, created_at, key_id, tree_size, root, signature from audit_checkpoints
		where id < ? order by id desc limit ?`, before, limit).Scan(ctx, &rows); err != nil {
		return nil, ledger.MapError(err)
	}
	for i := range rows {
		rows[i].decode()
	}
	return rows, nil
}

// CheckpointByID is one stored checkpoint whole: the file the CLI's audit
// checkpoint printed. ENOTFOUND when there is none of that id.
func (s *Service) CheckpointByID(ctx context.Context, id int64) (*Checkpoint, error) {
	var r StoredCheckpoint
	err := s.l.DB().NewRaw(`select id, created_at, key_id, tree_size, root, signature, heads from audit_checkpoints
		where id = ?`, id).Scan(ctx, &r.ID, &r.At, &r.KeyID, &r.TreeSize, &r.RootRaw, &r.SigRaw, &r.heads)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, postings.Errorf(postings.ENOTFOUND, "no checkpoint %d", id)
	} else if err != nil {
		return nil, ledger.MapError(err)
	}
	r.decode()
	c := &Checkpoint{Version: checkpointVersion, Time: r.Time, KeyID: r.KeyID, TreeSize: r.TreeSize, Root: r.Root, Signature: r.Signature}
	return c, json.Unmarshal(r.heads, &c.Heads) // what Checkpoint wrote: anything else is a bug or a tamper
}

// StoredClose is one stored period close without its balances.
type StoredClose struct {
	ID       int64     `bun:"id"`
	Merchant int64     `bun:"merchant_id"`
	Kind     string    `bun:"period_kind"` // PeriodDay or PeriodMonth
	Day      time.Time `bun:"period_start"`
	HeadSeq  int64     `bun:"head_seq"`
	HashRaw  []byte    `bun:"head_hash"`
	At       time.Time `bun:"closed_at"`
	KeyID    string    `bun:"key_id"`
	Start    string    `bun:"-"` // 2026-11-26 or 2026-11
	HeadHash string    `bun:"-"` // 64 hex digits
	ClosedAt Stamp     `bun:"-"`
}

// PeriodCloses lists the closes of merchant (0: every merchant's) with an
// id below before.
func (s *Service) PeriodCloses(ctx context.Context, merchant, before int64, limit int) ([]StoredClose, error) {
	before, limit = keyset(before, limit)
	var rows []StoredClose
	if err := s.l.DB().NewRaw(`select id, merchant_id, period_kind, period_start, head_seq, head_hash, closed_at, key_id
		from audit_period_closes where (? = 0 or merchant_id = ?) and id < ? order by id desc limit ?`,
		merchant, merchant, before, limit).Scan(ctx, &rows); err != nil {
		return nil, ledger.MapError(err)
	}
	for i := range rows {
		c := &rows[i]
		c.Start, c.HeadHash, c.ClosedAt = c.Day.Format("2006-01-02"), hex.EncodeToString(c.HashRaw), Stamp{c.At.UTC()}
		if c.Kind == PeriodMonth {
			c.Start = c.Day.Format("2006-01")
		}
	}
	return rows, nil
}
