package remittance

import (
	"context"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/ledger"
)

// The sanctions list that screening reads (docs/remittances.md,
// "Screening"): replaced whole by the operator, each version numbered, so
// that every lifecycle worker reloads it when it changes.

// ReplaceSanctions replaces the sanctions list and returns its version.
// Versions come from a sequence, so a number names one list only, even
// after an empty list (which leaves no rows, so SanctionsVersion reads 0)
// — a worker comparing versions never mistakes a new list for the one it
// has. Loads are serialised by a table lock that readers do not wait for
// (share row exclusive conflicts with itself and with writes, not with
// selects): without it two loads at once, under read committed, each
// deleted only the rows committed before it, and both lists stayed.
func (s *Service) ReplaceSanctions(ctx context.Context, entries []SanctionsEntry) (int64, error) {
	var version int64
	err := s.l.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, `lock table sanctions_entries in share row exclusive mode`); err != nil {
			return err
		}
		if err := tx.NewRaw(`select nextval('sanctions_version_seq')`).Scan(ctx, &version); err != nil {
			return err
		}
		const chunk = 5000
		for i := 0; i < len(entries); i += chunk {
			part := entries[i:min(i+chunk, len(entries))]
			names, countries, lists, refs := make([]string, len(part)), make([]string, len(part)), make([]string, len(part)), make([]string, len(part))
			for j, e := range part {
				names[j], countries[j], lists[j], refs[j] = e.Name, e.Country, e.List, e.Ref
			}
			_, err := tx.NewRaw(`
				insert into sanctions_entries (version, name, country, list, entry_ref)
				select ?, n, nullif(c, ''), nullif(l, ''), nullif(r, '') from unnest(?::text[], ?::text[], ?::text[], ?::text[]) as v(n, c, l, r)`,
				version, pgdialect.Array(names), pgdialect.Array(countries), pgdialect.Array(lists), pgdialect.Array(refs)).Exec(ctx)
			if err != nil {
				return err
			}
		}
		_, err := tx.NewRaw(`delete from sanctions_entries where version < ?`, version).Exec(ctx)
		return err
	})
	return version, ledger.MapError(err)
}

// SanctionsEntry is one line of the sanctions list.
type SanctionsEntry struct {
	Name    string `bun:"name"`
	Country string `bun:"country"`
	List    string `bun:"list"`
	Ref     string `bun:"entry_ref"`
}

// Sanctions returns the current list and its version (0: none loaded).
func (s *Service) Sanctions(ctx context.Context) ([]SanctionsEntry, int64, error) {
	var version int64
	if err := s.l.DB().NewRaw(`select coalesce(max(version), 0) from sanctions_entries`).Scan(ctx, &version); err != nil {
		return nil, 0, ledger.MapError(err)
	}
	var out []SanctionsEntry
	err := s.l.DB().NewRaw(`select name, coalesce(country, '') as country, coalesce(list, '') as list, coalesce(entry_ref, '') as entry_ref
		from sanctions_entries where version = ?`, version).Scan(ctx, &out)
	return out, version, ledger.MapError(err)
}

// SanctionsVersion is the version of the loaded list, cheap to poll.
func (s *Service) SanctionsVersion(ctx context.Context) (int64, error) {
	var version int64
	err := s.l.DB().NewRaw(`select coalesce(max(version), 0) from sanctions_entries`).Scan(ctx, &version)
	return version, ledger.MapError(err)
}
