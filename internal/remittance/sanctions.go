package remittance

import (
	"context"
	"io"
	"runtime"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/internal/remittance/rules"
	"github.com/paygate/gateway/ledger"
)

// The sanctions list that screening reads (docs/remittances.md,
// "Screening"): replaced whole by the operator, each version numbered, so
// that every lifecycle worker reloads it when it changes.
//
// A load is background work beside the API: it reads the file as a
// stream (rules.ReadSanctionsList) and inserts as it reads, in batches of
// sanctionsBatch rows, so that memory holds one batch whatever the size
// of the list; one load at a time runs, in this process and all others
// (the table lock below is taken before the file is read, so a waiting
// load has read nothing), and it yields the processor between batches. An 8 MiB list once took 536 MB
// and slowed the API eightfold (issue 27, 8e).

// sanctionsBatch is the rows of one insert statement: large enough that a
// list is a few hundred statements, small enough that a batch is a few
// hundred KiB.
const sanctionsBatch = 1000

// LoadSanctions replaces the sanctions list with the one read from r (CSV,
// rules.ReadSanctionsList's format and bounds) and returns its version and
// the number of entries. Reading, checking and inserting happen together,
// in one transaction: a malformed line anywhere refuses the whole file
// (EINVALID on sanctions_list, naming the line) and leaves the old list.
func (s *Service) LoadSanctions(ctx context.Context, r io.Reader) (version int64, n int, err error) {
	err = s.replaceSanctions(ctx, func(add func(SanctionsEntry) error) error {
		var err error
		n, err = rules.ReadSanctionsList(r, func(e rules.SanctionsEntry) error {
			return add(SanctionsEntry{Name: e.Name, Country: e.Country, List: e.List, Ref: e.ID})
		})
		return err
	}, &version)
	return version, n, err
}

// ReplaceSanctions replaces the sanctions list with entries, unchecked (the
// caller has read them with the rules), and returns its version.
func (s *Service) ReplaceSanctions(ctx context.Context, entries []SanctionsEntry) (int64, error) {
	var version int64
	err := s.replaceSanctions(ctx, func(add func(SanctionsEntry) error) error {
		for _, e := range entries {
			if err := add(e); err != nil {
				return err
			}
		}
		return nil
	}, &version)
	return version, err
}

// replaceSanctions runs one load: feed calls add with each entry.
//
// Versions come from a sequence, so a number names one list only, even
// after an empty list (which leaves no rows, so SanctionsVersion reads 0)
// — a worker comparing versions never mistakes a new list for the one it
// has. Loads are serialised by a table lock that readers do not wait for
// (share row exclusive conflicts with itself and with writes, not with
// selects): without it two loads at once, under read committed, each
// deleted only the rows committed before it, and both lists stayed.
func (s *Service) replaceSanctions(ctx context.Context, feed func(add func(SanctionsEntry) error) error, version *int64) error {
	err := s.l.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, `lock table sanctions_entries in share row exclusive mode`); err != nil {
			return err
		}
		if err := tx.NewRaw(`select nextval('sanctions_version_seq')`).Scan(ctx, version); err != nil {
			return err
		}
		b := sanctionsBatcher{tx: tx, version: *version}
		if err := feed(func(e SanctionsEntry) error { return b.add(ctx, e) }); err != nil {
			return err
		}
		if err := b.flush(ctx); err != nil {
			return err
		}
		_, err := tx.NewRaw(`delete from sanctions_entries where version < ?`, *version).Exec(ctx)
		return err
	})
	return ledger.MapError(err)
}

// sanctionsBatcher inserts entries sanctionsBatch at a time.
type sanctionsBatcher struct {
	tx                            bun.Tx
	version                       int64
	names, countries, lists, refs []string
}

func (b *sanctionsBatcher) add(ctx context.Context, e SanctionsEntry) error {
	b.names, b.countries = append(b.names, e.Name), append(b.countries, e.Country)
	b.lists, b.refs = append(b.lists, e.List), append(b.refs, e.Ref)
	if len(b.names) < sanctionsBatch {
		return nil
	}
	return b.flush(ctx)
}

func (b *sanctionsBatcher) flush(ctx context.Context) error {
	if len(b.names) == 0 {
		return nil
	}
	_, err := b.tx.NewRaw(`
		insert into sanctions_entries (version, name, country, list, entry_ref)
		select ?, n, nullif(c, ''), nullif(l, ''), nullif(r, '') from unnest(?::text[], ?::text[], ?::text[], ?::text[]) as v(n, c, l, r)`,
		b.version, pgdialect.Array(b.names), pgdialect.Array(b.countries), pgdialect.Array(b.lists), pgdialect.Array(b.refs)).Exec(ctx)
	b.names, b.countries, b.lists, b.refs = b.names[:0], b.countries[:0], b.lists[:0], b.refs[:0]
	runtime.Gosched() // background work: the API's goroutines first
	return err
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

// SanctionsList reads the current list into screening's index and returns
// it with its version (0 and an empty list: none loaded). It streams the
// rows into the index, checking each as a list line is checked, so that
// no copy of the list is made on the way; one statement reads the version
// and its rows, so that a load committing meanwhile cannot leave it with
// the new version's number and the old version's rows, or none.
func (s *Service) SanctionsList(ctx context.Context) (*rules.SanctionsList, int64, error) {
	rows, err := s.l.DB().QueryContext(ctx, `select version, name, coalesce(country, ''), coalesce(list, ''), coalesce(entry_ref, '')
		from sanctions_entries where version = (select max(version) from sanctions_entries) order by id`)
	if err != nil {
		return nil, 0, ledger.MapError(err)
	}
	defer rows.Close()
	var b rules.SanctionsListBuilder
	var version int64
	for rows.Next() {
		var e rules.SanctionsEntry
		if err := rows.Scan(&version, &e.Name, &e.Country, &e.List, &e.ID); err != nil {
			return nil, 0, ledger.MapError(err)
		}
		if err := b.Add(e); err != nil {
			return nil, 0, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, ledger.MapError(err)
	}
	return b.List(), version, nil
}

// SanctionsVersion is the version of the loaded list, cheap to poll.
func (s *Service) SanctionsVersion(ctx context.Context) (int64, error) {
	var version int64
	err := s.l.DB().NewRaw(`select coalesce(max(version), 0) from sanctions_entries`).Scan(ctx, &version)
	return version, ledger.MapError(err)
}
