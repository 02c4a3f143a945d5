-- 0011: key rolls (docs/security.md, "Rolling keys"). A merchant may roll
-- its public key and its callback signing key with an overlap: the key it
-- replaces stays valid until *_prev_until. Only one previous key is kept: a
-- second roll during an overlap ends the oldest key at once. The previous
-- public key is kept as its SHA-256, like the current one; the previous
-- signing key sealed, like the current one (same associated data, so that a
-- roll moves the sealed bytes without opening them).

alter table merchants
    add column public_key_prev_sha256 bytea
        constraint merchants_public_key_prev_check check (length(public_key_prev_sha256) = 32),
    add column public_key_prev_until timestamptz,
    add column private_key_prev_sealed bytea,
    add column private_key_prev_until timestamptz,
    add constraint merchants_public_key_prev_pair_check
        check ((public_key_prev_sha256 is null) = (public_key_prev_until is null)),
    add constraint merchants_private_key_prev_pair_check
        check ((private_key_prev_sealed is null) = (private_key_prev_until is null));
