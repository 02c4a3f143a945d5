package cards

import (
	"database/sql"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/paygate/gateway/postings"
)

type cardRow struct {
	bun.BaseModel  `bun:"table:cards,alias:c"`
	CardNo         string         `bun:"card_no,pk"`
	MerchantID     int64          `bun:"merchant_id"`
	Bin            string         `bun:"bin"`
	Currency       string         `bun:"currency"`
	Network        string         `bun:"network"`
	Last4          string         `bun:"last4"`
	ExpiryMonth    int            `bun:"expiry_month"`
	ExpiryYear     int            `bun:"expiry_year"`
	PanSealed      []byte         `bun:"pan_sealed"`
	PanFingerprint []byte         `bun:"pan_fingerprint"`
	Status         string         `bun:"status"`
	FreezeReason   sql.NullString `bun:"freeze_reason"`
	Remark         sql.NullString `bun:"remark"`
	CallbackURL    sql.NullString `bun:"callback_url"`
	CreatedAt      time.Time      `bun:"created_at"`
	UpdatedAt      time.Time      `bun:"updated_at"`
	CancelledAt    bun.NullTime   `bun:"cancelled_at"`
}

// cardColumns are the columns of cardRow, in its field order.
const cardColumns = `card_no, merchant_id, bin, currency, network, last4, expiry_month, expiry_year,
	pan_sealed, pan_fingerprint, status, freeze_reason, remark, callback_url, created_at, updated_at, cancelled_at`

// cardColumnsOf is cardColumns qualified with a table alias.
func cardColumnsOf(alias string) string {
	cols := strings.Split(cardColumns, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// scan reads the card columns of a row, then extra columns into more.
func (r *cardRow) scan(rows pgx.Rows, more ...any) error {
	var cancelled *time.Time
	dest := append([]any{&r.CardNo, &r.MerchantID, &r.Bin, &r.Currency, &r.Network, &r.Last4, &r.ExpiryMonth, &r.ExpiryYear,
		&r.PanSealed, &r.PanFingerprint, &r.Status, &r.FreezeReason, &r.Remark, &r.CallbackURL,
		&r.CreatedAt, &r.UpdatedAt, &cancelled}, more...)
	err := rows.Scan(dest...)
	if cancelled != nil {
		r.CancelledAt = bun.NullTime{Time: *cancelled}
	}
	return err
}

func cardFromRow(r *cardRow, available, held int64) *Card {
	c := &Card{
		CardNo: r.CardNo, MerchantID: r.MerchantID, Bin: r.Bin, Network: r.Network, Currency: r.Currency,
		Last4: r.Last4, ExpiryMonth: r.ExpiryMonth, ExpiryYear: r.ExpiryYear, PanRef: panRef(r.CardNo),
		Status: r.Status, FreezeReason: r.FreezeReason.String, Remark: r.Remark.String,
		CallbackURL: r.CallbackURL.String, Available: available, Held: held,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
	if !r.CancelledAt.IsZero() {
		t := r.CancelledAt.Time.UTC()
		c.CancelledAt = &t
	}
	return c
}

// cardEventData is the card of spec 2.4 as callbacks carry it.
func cardEventData(c *Card) map[string]any {
	cur := postings.MustCurrency(c.Currency)
	return map[string]any{
		"cardNo": c.CardNo, "last4": c.Last4, "status": c.Status, "currency": c.Currency,
		"balance":   postings.Money{Minor: c.Available, Currency: cur},
		"held":      postings.Money{Minor: c.Held, Currency: cur},
		"createdAt": c.CreatedAt.UTC().Format(time.RFC3339),
	}
}
