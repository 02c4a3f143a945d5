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
// books pages (issue 30): lists by id, newest first, keyset-paged (before:
// the last id shown, 0 for the first page), and one checkpoint whole, as
// the file `audit verify --checkpoint` takes. They read what was signed
// and decide nothing.

// BooksPageMax bounds a page of checkpoints or closes.
const BooksPageMax = 200

// StoredCheckpoint is one stored checkpoint without its heads.
type StoredCheckpoint struct {
	ID        int64
	Time      Stamp
	KeyID     string
	TreeSize  int
	Root      string // 64 hex digits
	Signature string // 128 hex digits
}

type checkpointRow struct {
	ID        int64     `bun:"id"`
	CreatedAt time.Time `bun:"created_at"`
	KeyID     string    `bun:"key_id"`
	TreeSize  int       `bun:"tree_size"`
	Root      []byte    `bun:"root"`
	Heads     []byte    `bun:"heads"`
	Signature []byte    `bun:"signature"`
}

func (r *checkpointRow) stored() StoredCheckpoint {
	return StoredCheckpoint{ID: r.ID, Time: Stamp{r.CreatedAt.UTC()}, KeyID: r.KeyID, TreeSize: r.TreeSize,
		Root: hex.EncodeToString(r.Root), Signature: hex.EncodeToString(r.Signature)}
}

// pageBounds clips a page's size and reads "no cursor" as past every id.
func pageBounds(before int64, limit int) (int64, int) {
	if before <= 0 {
		before = 1<<63 - 1
	}
	if limit <= 0 || limit > BooksPageMax {
		limit = BooksPageMax
	}
	return before, limit
}

// Checkpoints lists the stored checkpoints with an id below before, newest
// first, at most limit (BooksPageMax).
func (s *Service) Checkpoints(ctx context.Context, before int64, limit int) ([]StoredCheckpoint, error) {
	before, limit = pageBounds(before, limit)
	var rows []checkpointRow
	if err := s.l.DB().NewRaw(`select id, created_at, key_id, tree_size, root, signature from audit_checkpoints
		where id < ? order by id desc limit ?`, before, limit).Scan(ctx, &rows); err != nil {
		return nil, ledger.MapError(err)
	}
	out := make([]StoredCheckpoint, len(rows))
	for i := range rows {
		out[i] = rows[i].stored()
	}
	return out, nil
}

// CheckpointByID is one stored checkpoint whole: the file the CLI's audit
// checkpoint printed, which audit verify --checkpoint reads. ENOTFOUND
// when there is none of that id.
func (s *Service) CheckpointByID(ctx context.Context, id int64) (*Checkpoint, error) {
	var r checkpointRow
	err := s.l.DB().NewRaw(`select id, created_at, key_id, tree_size, root, heads, signature from audit_checkpoints
		where id = ?`, id).Scan(ctx, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, postings.Errorf(postings.ENOTFOUND, "no checkpoint %d", id)
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	st := r.stored()
	c := &Checkpoint{Version: checkpointVersion, Time: st.Time, KeyID: st.KeyID, TreeSize: st.TreeSize, Root: st.Root, Signature: st.Signature}
	if err := json.Unmarshal(r.Heads, &c.Heads); err != nil {
		return nil, err // the table holds what Checkpoint wrote: anything else is a bug or a tamper
	}
	return c, nil
}

// StoredClose is one stored period close without its balances.
type StoredClose struct {
	ID       int64
	Merchant int64
	Kind     string // PeriodDay or PeriodMonth
	Start    string // 2026-11-26 or 2026-11
	HeadSeq  int64
	HeadHash string // 64 hex digits
	ClosedAt Stamp
	KeyID    string
}

// PeriodCloses lists the closes of merchant (0: every merchant's) with an
// id below before, newest first, at most limit (BooksPageMax).
func (s *Service) PeriodCloses(ctx context.Context, merchant, before int64, limit int) ([]StoredClose, error) {
	before, limit = pageBounds(before, limit)
	var rows []struct {
		ID       int64     `bun:"id"`
		Merchant int64     `bun:"merchant_id"`
		Kind     string    `bun:"period_kind"`
		Start    time.Time `bun:"period_start"`
		HeadSeq  int64     `bun:"head_seq"`
		HeadHash []byte    `bun:"head_hash"`
		ClosedAt time.Time `bun:"closed_at"`
		KeyID    string    `bun:"key_id"`
	}
	if err := s.l.DB().NewRaw(`select id, merchant_id, period_kind, period_start, head_seq, head_hash, closed_at, key_id
		from audit_period_closes where (? = 0 or merchant_id = ?) and id < ? order by id desc limit ?`,
		merchant, merchant, before, limit).Scan(ctx, &rows); err != nil {
		return nil, ledger.MapError(err)
	}
	out := make([]StoredClose, len(rows))
	for i, r := range rows {
		start := r.Start.Format("2006-01-02")
		if r.Kind == PeriodMonth {
			start = r.Start.Format("2006-01")
		}
		out[i] = StoredClose{ID: r.ID, Merchant: r.Merchant, Kind: r.Kind, Start: start, HeadSeq: r.HeadSeq,
			HeadHash: hex.EncodeToString(r.HeadHash), ClosedAt: Stamp{r.ClosedAt.UTC()}, KeyID: r.KeyID}
	}
	return out, nil
}
