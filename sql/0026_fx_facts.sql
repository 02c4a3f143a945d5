-- Economic facts inside the chain (issue 30 point 2; docs/audit.md,
-- "Economic facts"). FX rates become versioned and append-only, the
-- canonical encoding gains version 2 for the entries that carry facts, and
-- the auditor reads rates, authorizations, holds and remittances through
-- views without secrets.

-- Every rate ever set is a version: a new rate is a new row with its time,
-- nothing is updated or deleted, and the rate of a pair is its latest
-- version (the highest number). An entry that converted records the version
-- it used, so the rate of any conversion can be looked up and checked
-- against the entry, which keeps it in its hash.
create table fx_rate_versions (
    version    bigint      generated always as identity constraint fx_rate_versions_pkey primary key,
    base       text        not null constraint fx_rate_versions_base_check check (base ~ '^[A-Z]{3}$'),
    quote      text        not null constraint fx_rate_versions_quote_check check (quote ~ '^[A-Z]{3}$'),
    mid_rate   numeric     not null constraint fx_rate_versions_mid_rate_check check (mid_rate > 0),
    spread_bps integer     not null constraint fx_rate_versions_spread_bps_check check (spread_bps between 0 and 9999),
    source     text        not null constraint fx_rate_versions_source_check check (source in ('seed', 'operator')),
    set_at     timestamptz not null,
    constraint fx_rate_versions_pair_check check (base <> quote)
);
create index fx_rate_versions_pair_idx on fx_rate_versions (base, quote, version desc);

-- The rates as they were become the first versions.
insert into fx_rate_versions (base, quote, mid_rate, spread_bps, source, set_at)
select base, quote, mid_rate, spread_bps, source, updated_at from fx_rates order by base, quote;
drop table fx_rates;

create trigger fx_rate_versions_append_only before update or delete on fx_rate_versions
    for each row execute function journal_refuse_change();
create trigger fx_rate_versions_no_truncate before truncate on fx_rate_versions
    for each statement execute function journal_refuse_change();

-- fx_rates is now the latest version of each pair, with the columns it had
-- (updated_at is the version's time) and the version.
create view fx_rates as
select distinct on (base, quote) base, quote, mid_rate, spread_bps, source, set_at as updated_at, version
from fx_rate_versions
order by base, quote, version desc;

-- The canonical encoding, version 2: an entry whose metadata has the key
-- "facts" is encoded with "GWE2" as its first line instead of "GWE1", and
-- otherwise the same (postings/hash.go). Old entries have no such key:
-- their bytes, and their hashes, are unchanged.
create or replace function entry_canonical(m bigint, s bigint) returns bytea
    language sql stable as
$$
select convert_to(
    case when e.metadata ? 'facts' then 'GWE2' else 'GWE1' end || E'\n' ||
    'merchant=' || e.merchant_id || E'\n' ||
    'seq=' || e.merchant_seq || E'\n' ||
    'kind=' || e.kind || E'\n' ||
    'ts=' || (extract(epoch from e.created_at) * 1000000)::bigint || E'\n' ||
    'card=' || coalesce(e.card_no, '') || E'\n' ||
    'tx=' || coalesce(e.tx_id, '') || E'\n' ||
    'auth=' || coalesce(e.auth_id, '') || E'\n' ||
    coalesce((select string_agg('meta=' || kv.key || '=' || kv.value || E'\n', '' order by kv.key collate "C")
              from jsonb_each_text(e.metadata) kv), '') ||
    coalesce((select string_agg('posting=' || sa.address || '>' || da.address || ':' || p.amount || ':' || p.currency || E'\n', '' order by p.idx)
              from postings p
              join accounts sa on sa.id = p.source_id
              join accounts da on da.id = p.destination_id
              where p.merchant_id = e.merchant_id and p.merchant_seq = e.merchant_seq), ''),
    'UTF8')
from entries e
where e.merchant_id = m and e.merchant_seq = s
$$;

-- The auditor's views of the facts behind the journal. Each lists its
-- columns: never a card number (cards are not here at all; card_no is the
-- token the journal already carries), a key, a sealed field, a
-- beneficiary's details or a callback URL. A view runs with its owner's
-- privileges, so the auditor reads these and still not the tables.
create view audit_fx_rates as
select version, base, quote, mid_rate, spread_bps, source, set_at from fx_rate_versions;

create view audit_authorizations as
select auth_id, merchant_id, card_no, message_id, txn_amount, txn_currency, fx_rate, amount, fee, currency,
       held, captured, released, txn_reversed, status, mcc, merchant_country, expires_at, created_at, updated_at
from authorizations;

-- The holds: what each open authorization still holds, and until when.
create view audit_holds as
select auth_id, merchant_id, card_no, currency, amount + fee as approved, held, expires_at, created_at
from authorizations where status = 'OPEN';

create view audit_remittances as
select tx_id, merchant_id, amount, fee, currency, rail, status, reason,
       beneficiary ->> 'country' as beneficiary_country, created_at, updated_at, settled_at
from remittances;

create view audit_remittance_history as
select tx_id, seq, status, reason, at from remittance_history;

grant select on audit_fx_rates, audit_authorizations, audit_holds, audit_remittances, audit_remittance_history
    to gateway_auditor;
