-- 0014: every callback delivery attempt, not only the last (the console's
-- event page lists them; docs/callbacks.md, "Attempts"). Written by the
-- same statement that records the attempt on its delivery
-- (delivery.Store.RecordDeliveries), so an attempt is in both or in
-- neither. Kept as long as the events and deliveries are (no purge yet).
--
-- No foreign key to deliveries: the row is written in the statement that
-- updates its delivery (which exists and is locked then), and the check
-- would cost the dispatcher's hot statement a lookup per attempt.
create table delivery_attempts (
    id              bigint      generated always as identity constraint delivery_attempts_pkey primary key,
    merchant_id     bigint      not null,
    event_seq       bigint      not null,
    -- The delivery's retry window when it was made: a replay starts a new
    -- window and numbers its attempts from 1 again.
    window_start    timestamptz not null,
    attempt         integer     not null constraint delivery_attempts_attempt_check check (attempt >= 1),
    at              timestamptz not null, -- when the request was sent
    duration_ms     integer     not null constraint delivery_attempts_duration_check check (duration_ms >= 0),
    http_status     integer     constraint delivery_attempts_http_status_check check (http_status between 100 and 999),
    error           text        constraint delivery_attempts_error_check check (length(error) <= 500),
    -- What the delivery became: DELIVERED, PENDING (to be tried again at
    -- next_attempt_at) or FAILED (the window is over).
    outcome         text        not null constraint delivery_attempts_outcome_check check (outcome in ('DELIVERED', 'PENDING', 'FAILED')),
    next_attempt_at timestamptz,
    constraint delivery_attempts_next_check check ((outcome = 'PENDING') = (next_attempt_at is not null))
);
create index delivery_attempts_delivery_idx on delivery_attempts (merchant_id, event_seq, id);
