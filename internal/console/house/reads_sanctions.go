package house

import (
	"context"
	"strconv"
	"time"

	"github.com/paygate/gateway/internal/remittance"
)

// The sanctions page's reads: the current list's version, size and first
// entries (the remittance domain's SanctionsSample: the page needs a count
// and a sample, not the whole list screening reads), and who loaded it
// from the console (the console's own audit trail).

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

func (s *pages) sanctionsInfo(ctx context.Context) (*sanctionsInfo, error) {
	sum, err := s.d.Remittances.SanctionsSample(ctx, sanctionsSampleMax)
	if err != nil {
		return nil, err
	}
	in := sanctionsInfo{Version: sum.Version, Entries: sum.Entries, Sample: sum.Sample}
	if in.Version == 0 {
		return &in, nil
	}
	in.LoadedAt, in.LoadedBy, err = s.d.Console.LastLoad(ctx, "sanctions.load", sanctionsTarget(in.Version))
	if err != nil {
		return nil, err
	}
	return &in, nil
}
