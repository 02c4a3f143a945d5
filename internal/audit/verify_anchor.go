package audit

import (
	"context"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/paygate/gateway/ledger"
)

// reportHeads lists the snapshot's heads in merchant order for the report.
func reportHeads(heads map[int64]journalHead) []CheckpointHead {
	out := make([]CheckpointHead, 0, len(heads))
	for _, m := range slices.Sorted(maps.Keys(heads)) {
		out = append(out, CheckpointHead{Merchant: m, Seq: heads[m].seq, Hash: hex.EncodeToString(heads[m].hash)})
	}
	return out
}

// emptiedEvidenceSQL asks whether accounts exist: the writer opens an
// account only in the batch of the entry that first posts to it, and
// accounts are append-only (sql/0021), so an account is the database's own
// record that an entry existed, even when the heads were emptied too.
const emptiedEvidenceSQL = `select count(*) from accounts where $1::bigint = 0 or merchant_id = $1::bigint`

// emptiedEvidence says, for a journal without entries, what shows that it
// had some: the heads, the accounts, the checkpoint. "" when nothing does
// (a new database).
func emptiedEvidence(ctx context.Context, conn *pgx.Conn, opts VerifyOptions, heads []CheckpointHead) (string, error) {
	var why []string
	var said int64
	for _, h := range heads {
		said += h.Seq
	}
	if said > 0 {
		why = append(why, fmt.Sprintf("the heads say %d entries", said))
	}
	var accounts int64
	if err := conn.QueryRow(ctx, emptiedEvidenceSQL, verifySQLMode, opts.Merchant).Scan(&accounts); err != nil {
		return "", ledger.MapError(err)
	}
	if accounts > 0 {
		why = append(why, fmt.Sprintf("%d accounts exist, each opened by an entry", accounts))
	}
	if c := opts.Checkpoint; c != nil {
		var n int64
		for _, h := range c.Heads {
			if opts.Merchant == 0 || h.Merchant == opts.Merchant {
				n += h.Seq
			}
		}
		if n > 0 {
			why = append(why, fmt.Sprintf("the checkpoint of %s counts %d", c.Time.UTC().Format("2006-01-02T15:04:05Z"), n))
		}
	}
	if len(why) == 0 {
		return "", nil
	}
	return "the journal has no entries, but " + strings.Join(why, "; ") + ": the journal was emptied", nil
}
