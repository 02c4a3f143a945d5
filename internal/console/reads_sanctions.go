package console

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/paygate/gateway/internal/remittance"
)

// The sanctions page's reads: the current list's version, size and first
// entries, and who loaded it from the console. The remittance domain's
// Sanctions reads the whole list (what screening needs); the page needs a
// count and a sample, so these are the console's own bounded statements.

// sanctionsSampleMax bounds the entries the page shows of a list.
const sanctionsSampleMax = 10

type sanctionsInfo struct {
	Version int64 // 0: no list loaded
	Entries int64
	Sample  []remittance.SanctionsEntry
	// LoadedAt and LoadedBy come from the console's audit trail; empty
	// when the list was loaded by the CLI, which records neither.
	LoadedAt time.Time
	LoadedBy string
}

// sanctionsTarget is the audit row's target of a load: the version, which
// the page looks the row up by.
func sanctionsTarget(version int64) string { return "version " + strconv.FormatInt(version, 10) }

func (s *Server) sanctionsInfo(ctx context.Context) (*sanctionsInfo, error) {
	var in sanctionsInfo
	err := s.cfg.DB.QueryRowContext(ctx, `select version, count(*) from sanctions_entries
		where version = (select max(version) from sanctions_entries) group by version`).Scan(&in.Version, &in.Entries)
	if errors.Is(err, sql.ErrNoRows) {
		return &in, nil
	}
	if err != nil {
		return nil, err
	}
	rows, err := s.cfg.DB.QueryContext(ctx, `select name, coalesce(country, ''), coalesce(list, ''), coalesce(entry_ref, '')
		from sanctions_entries where version = $1 order by id limit $2`, in.Version, sanctionsSampleMax)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var e remittance.SanctionsEntry
		if err := rows.Scan(&e.Name, &e.Country, &e.List, &e.Ref); err != nil {
			return nil, err
		}
		in.Sample = append(in.Sample, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The partial index console_audit_sanctions_idx holds the loads only.
	err = s.cfg.DB.QueryRowContext(ctx, `select at, login from console_audit
		where action = 'sanctions.load' and outcome = 'ok' and target = $1 order by id desc limit 1`,
		sanctionsTarget(in.Version)).Scan(&in.LoadedAt, &in.LoadedBy)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	return &in, nil
}
