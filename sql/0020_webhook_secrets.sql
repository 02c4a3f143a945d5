-- 0019: the merchant's Standard Webhooks secret (docs/callbacks.md,
-- "Standard Webhooks"). One per merchant until webhook endpoints exist
-- (issue 32 point 2 will key it by endpoint). A table of its own rather
-- than columns of merchants: the merchants' code is moving, and a merchant
-- created before this migration gets its secret lazily (at its first
-- delivery or roll), since only the application can seal one. Sealed like
-- the signing key (ledger.Sealer, associated data
-- "merchant-webhook-secret:" and the shop number); during a roll's overlap
-- the replaced secret is kept, sealed, until secret_prev_until.

create table webhook_secrets (
    merchant_id bigint primary key references merchants (id),
    secret_sealed bytea not null,
    secret_prev_sealed bytea,
    secret_prev_until timestamptz,
    rolled_at timestamptz not null,
    constraint webhook_secrets_prev_pair_check
        check ((secret_prev_sealed is null) = (secret_prev_until is null))
);
