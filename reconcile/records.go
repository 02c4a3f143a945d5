package reconcile

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/gateway/ledger"
)

// Records are what reconciliation has accepted (sql/0019): a run per file
// that matched completely, named by its SHA-256, and the journal entries it
// accounted for, each at most once per kind. They are how a second claim
// on one clearing is caught across files and runs. Every kind of
// reconciliation records through them; KindCardClearing is the first.
type Records struct{ db *sql.DB }

// KindCardClearing is a card network settlement file against CARD_SETTLE
// entries.
const KindCardClearing = "card_clearing"

// NewRecords reads and writes the records on db.
func NewRecords(db *sql.DB) *Records { return &Records{db: db} }

// Run is one recorded reconciliation.
type Run struct {
	ID         int64     `json:"id"`
	Kind       string    `json:"kind"`
	FileSHA256 string    `json:"fileSha256"` // hex
	FileName   string    `json:"fileName"`
	From       string    `json:"from"` // the period, YYYY-MM-DD, both included
	To         string    `json:"to"`
	Actor      string    `json:"actor"`
	RecordedAt time.Time `json:"recordedAt"`
	Rows       int64     `json:"rows"`
	Items      int64     `json:"items"` // the entries it accounted for
}

// Claim is an entry's record: the run that accounted for it, and the line.
type Claim struct {
	EntryID int64
	Line    int64
	Run     Run
}

// RecordedItem is an entry a run accounts for, from the file's line.
type RecordedItem struct {
	EntryID int64
	Line    int64
}

const runColumns = `r.id, r.kind, r.file_sha256, r.file_name, r.period_from, r.period_to, r.actor, r.recorded_at, r.rows, r.items`

func scanRun(sc interface{ Scan(...any) error }, extra ...any) (Run, error) {
	var r Run
	var sha []byte
	var from, to time.Time
	dest := append([]any{&r.ID, &r.Kind, &sha, &r.FileName, &from, &to, &r.Actor, &r.RecordedAt, &r.Rows, &r.Items}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return Run{}, err
	}
	r.FileSHA256, r.From, r.To = hex.EncodeToString(sha), from.Format(time.DateOnly), to.Format(time.DateOnly)
	r.RecordedAt = r.RecordedAt.UTC()
	return r, nil
}

// RunByFile is the run that recorded the file with this SHA-256, or nil.
func (s *Records) RunByFile(ctx context.Context, kind string, sha256 []byte) (*Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, `select `+runColumns+` from reconciliation_runs r
		where r.kind = $1 and r.file_sha256 = $2`, kind, sha256))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	return &r, nil
}

// Claims returns the records of those of entryIDs that a run accounted
// for, by entry id.
func (s *Records) Claims(ctx context.Context, kind string, entryIDs []int64) (map[int64]Claim, error) {
	out := map[int64]Claim{}
	if len(entryIDs) == 0 {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, `select `+runColumns+`, i.entry_id, i.line
		from reconciled_items i join reconciliation_runs r on r.id = i.run_id
		where i.kind = $1 and i.entry_id = any($2::bigint[])`, kind, int64Array(entryIDs))
	if err != nil {
		return nil, ledger.MapError(err)
	}
	defer rows.Close()
	for rows.Next() {
		var c Claim
		if c.Run, err = scanRun(rows, &c.EntryID, &c.Line); err != nil {
			return nil, ledger.MapError(err)
		}
		out[c.EntryID] = c
	}
	return out, ledger.MapError(rows.Err())
}

// recordBatch is how many items one insert carries.
const recordBatch = 1000

// Recorded is what Record did.
type Recorded struct {
	Run *Run // the run that accounts for the file: the new one, or Existing
	// Existing: a run of the same file was there (reconciled at the same
	// moment elsewhere); nothing was recorded.
	Existing bool
	// Taken are items another run accounts for (it committed since they
	// were checked): nothing was recorded, the caller reports them.
	Taken []int64
}

// Record records run and its items in one transaction: whole or not at all.
func (s *Records) Record(ctx context.Context, run Run, sha256 []byte, items []RecordedItem) (Recorded, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Recorded{}, ledger.MapError(err)
	}
	defer func() { _ = tx.Rollback() }()
	var out Recorded
	r, err := scanRun(tx.QueryRowContext(ctx, `insert into reconciliation_runs
		(kind, file_sha256, file_name, period_from, period_to, actor, rows, items)
		values ($1, $2, $3, $4::date, $5::date, $6, $7, $8)
		on conflict (kind, file_sha256) do nothing
		returning `+strings.ReplaceAll(runColumns, "r.", ""), run.Kind, sha256, run.FileName, run.From, run.To, run.Actor, run.Rows, int64(len(items))))
	if errors.Is(err, sql.ErrNoRows) {
		_ = tx.Rollback()
		same, err := s.RunByFile(ctx, run.Kind, sha256)
		return Recorded{Run: same, Existing: true}, err
	}
	if err != nil {
		return Recorded{}, ledger.MapError(err)
	}
	for start := 0; start < len(items); start += recordBatch {
		batch := items[start:min(start+recordBatch, len(items))]
		ids, lines := make([]int64, len(batch)), make([]int64, len(batch))
		for i, it := range batch {
			ids[i], lines[i] = it.EntryID, it.Line
		}
		// An entry another run holds is skipped, not an error: the rows
		// that were inserted tell which.
		got, err := tx.QueryContext(ctx, `insert into reconciled_items (kind, entry_id, run_id, line)
			select $1, u.entry_id, $2, u.line from unnest($3::bigint[], $4::bigint[]) as u(entry_id, line)
			on conflict (kind, entry_id) do nothing
			returning entry_id`, run.Kind, r.ID, int64Array(ids), int64Array(lines))
		if err != nil {
			return Recorded{}, ledger.MapError(err)
		}
		inserted := map[int64]bool{}
		for got.Next() {
			var id int64
			if err := got.Scan(&id); err != nil {
				got.Close()
				return Recorded{}, ledger.MapError(err)
			}
			inserted[id] = true
		}
		got.Close()
		if err := got.Err(); err != nil {
			return Recorded{}, ledger.MapError(err)
		}
		for _, id := range ids {
			if !inserted[id] {
				out.Taken = append(out.Taken, id)
			}
		}
	}
	if len(out.Taken) > 0 {
		return out, nil // rolled back
	}
	if err := tx.Commit(); err != nil {
		return Recorded{}, ledger.MapError(err)
	}
	out.Run = &r
	return out, nil
}

// int64Array writes ids as a PostgreSQL array literal, bound as one text
// parameter (the pool runs the simple protocol, which sends every
// parameter as text).
func int64Array(ids []int64) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	b.WriteByte('}')
	return b.String()
}
