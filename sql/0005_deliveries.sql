-- 0005: callback deliveries. One row per event that has a target URL,
-- written with the event (the transactional outbox); the dispatcher claims
-- due rows with SKIP LOCKED. Events without a URL have no row: they are
-- kept in events and shown, not sent.

create table deliveries (
    merchant_id     bigint      not null,
    event_seq       bigint      not null,
    subject         text        not null, -- card or remittance: deliveries of one subject go in order
    url             text        not null constraint deliveries_url_check check (length(url) between 1 and 2048),
    status          text        not null default 'PENDING'
                                constraint deliveries_status_check check (status in ('PENDING', 'DELIVERED', 'FAILED')),
    attempts        integer     not null default 0 constraint deliveries_attempts_check check (attempts >= 0),
    -- The 24-hour retry window starts here: at the event, or at a replay.
    window_start    timestamptz not null,
    next_attempt_at timestamptz,
    last_attempt_at timestamptz,
    last_status     integer,
    last_error      text        constraint deliveries_last_error_check check (length(last_error) <= 500),
    delivered_at    timestamptz,
    constraint deliveries_pkey primary key (merchant_id, event_seq),
    constraint deliveries_event_fkey foreign key (merchant_id, event_seq) references events (merchant_id, event_seq),
    constraint deliveries_pending_check check ((status = 'PENDING') = (next_attempt_at is not null))
);
create index deliveries_due_idx on deliveries (next_attempt_at) where status = 'PENDING';
create index deliveries_subject_idx on deliveries (merchant_id, subject, event_seq) where status = 'PENDING';
create index deliveries_status_idx on deliveries (merchant_id, status, event_seq);
