package audit

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// accountCache gives the stream each posting's two accounts (merchant,
// type, currency, card: what the hash commits to) without a probe of
// accounts per posting: the accounts of each batch of postings that are
// not known yet are looked up in one query, between two fetches, and kept.
// A probe per posting side was most of the stream's time (two million
// probes for a million postings, each a few microseconds, where the
// accounts repeat: one funding account per merchant and currency, a few
// accounts per card). The cache is bounded: when a batch would take it
// past accountsCachedMax it starts again from that batch's accounts.
type accountCache struct {
	known map[int64]postings.Account
	miss  []int64
	buf   []byte   // the lookup's array parameter
	strs  interner // its own: the cache is the fetcher's, the stream's interner the stream's
	max   int      // accountsCachedMax unless set (tests)
}

// accountsCachedMax bounds the accounts kept, about 100 bytes each: a
// batch of postings names at most 2 × verifyFetchRows of them.
const accountsCachedMax = 1 << 16

// verifyAccountsSQL looks up accounts by id: one probe of accounts_pkey per
// id, kept apart by "offset 0", whatever the statistics. An id that is not
// there (only possible without the foreign keys) is not returned, and reads
// as the zero account, as a missing account did in a join.
const verifyAccountsSQL = `
	select v.id, a.merchant_id, a.type, a.currency, a.card_no
	from unnest($1::bigint[]) v(id)
	cross join lateral (select merchant_id, type, currency, card_no from accounts where id = v.id offset 0) a`

var verifyAccountsTypes = []uint32{oidInt8, oidInt8, oidText, oidText, oidText}

// get returns a known account: resolve must have been called for it.
func (ac *accountCache) get(id int64) postings.Account { return ac.known[id] }

// resolve makes every id in ids known.
func (ac *accountCache) resolve(ctx context.Context, conn *pgconn.PgConn, ids []int64) error {
	if ac.known == nil {
		ac.known = make(map[int64]postings.Account, 1024)
	}
	ac.miss = ac.miss[:0]
	for _, id := range ids {
		if _, ok := ac.known[id]; !ok {
			ac.miss = append(ac.miss, id)
		}
	}
	if len(ac.miss) == 0 {
		return nil
	}
	slices.Sort(ac.miss)
	ac.miss = slices.Compact(ac.miss)
	if ac.max == 0 {
		ac.max = accountsCachedMax
	}
	if len(ac.known)+len(ac.miss) > ac.max {
		clear(ac.known)
		ac.miss = append(ac.miss[:0], ids...)
		slices.Sort(ac.miss)
		ac.miss = slices.Compact(ac.miss)
	}
	return ac.lookup(ctx, conn)
}

// lookup reads the accounts of ac.miss.
func (ac *accountCache) lookup(ctx context.Context, conn *pgconn.PgConn) error {
	ac.buf = appendInt8Array(ac.buf[:0], ac.miss)
	rr := conn.ExecParams(ctx, verifyAccountsSQL, [][]byte{ac.buf}, nil, []int16{pgx.TextFormatCode}, []int16{pgx.BinaryFormatCode})
	if err := checkColumns("the account lookup", rr.FieldDescriptions(), verifyAccountsTypes); err != nil {
		rr.Close()
		return err
	}
	for _, id := range ac.miss {
		ac.known[id] = postings.Account{} // unless found below
	}
	for rr.NextRow() {
		v := rr.Values()
		if len(v[0]) != 8 || len(v[1]) != 8 {
			rr.Close()
			return fmt.Errorf("ledger: verify: the account lookup returned a NULL id or merchant")
		}
		ac.known[readInt8(v[0])] = postings.Account{
			Merchant: readInt8(v[1]),
			Type:     postings.AccountType(ac.strs.get(v[2])),
			Currency: ac.strs.get(v[3]),
			Card:     ac.strs.get(v[4]),
		}
	}
	_, err := rr.Close()
	return ledger.MapError(err)
}
