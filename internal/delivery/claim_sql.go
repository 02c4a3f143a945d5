package delivery

// claimSQL is ClaimDeliveries' one statement: the due deliveries (the
// first pending one of each subject and endpoint), claimed for the lease,
// with their events, their merchants' signing keys and their endpoints'
// secret rows. Its binds: now, the limit, the lease's end.
const claimSQL = `
	with due as (
		select d.merchant_id, d.event_seq, d.endpoint_no from deliveries d
		where d.status = 'PENDING' and d.next_attempt_at <= ?
		  -- The first pending delivery of its subject: a correlated min
		  -- over deliveries_subject_idx, one index probe per candidate
		  -- whatever the statistics say (an anti-join planned on stale
		  -- statistics stalled a sudden backlog for 30 s). The order is
		  -- per endpoint: a slow endpoint holds back no other.
		  and d.event_seq = (
			select min(p.event_seq) from deliveries p
			where p.merchant_id = d.merchant_id and p.endpoint_no = d.endpoint_no and p.subject = d.subject
			  and p.status = 'PENDING')
		  -- Not a merchant in a move between cells (internal/cellmove):
		  -- fenced at its source (paused, verified or switched, not yet
		  -- removed), or arriving at its target (copied, not yet switched).
		  -- The cell it ends in sends its callbacks. Before, the target's
		  -- dispatcher sent the copied pending ones a second time and wrote
		  -- attempts the source lacks, which failed the move's verification
		  -- for good (chaos movekill); the source's, after the tail copy,
		  -- wrote attempts the target lacks.
		  and not exists (select 1 from ledger_heads h where h.merchant_id = d.merchant_id and h.cellmove_fenced)
		  and not exists (select 1 from cellmove_arrivals a where a.merchant_id = d.merchant_id and a.state = 'copying')
		order by d.next_attempt_at
		limit ?
		for update of d skip locked
	), claimed as (
		update deliveries d set attempts = d.attempts + 1, next_attempt_at = ?
		from due where d.merchant_id = due.merchant_id and d.event_seq = due.event_seq and d.endpoint_no = due.endpoint_no
		returning d.merchant_id, d.event_seq, d.endpoint_no, d.url, d.attempts, d.window_start
	)
	select c.*, e.event_id, e.event_type, e.payload::text as payload, m.shop_no, m.private_key_sealed,
	       m.private_key_prev_sealed, m.private_key_prev_until,
	       -- The endpoint's secret row, in this statement: secretsInForce
	       -- opens it only when its roll is not in the cache. Endpoint
	       -- one's is webhook_secrets, another's its endpoint row.
	       coalesce(ws.rolled_at, we.rolled_at) as ws_rolled_at, coalesce(ws.secret_sealed, we.secret_sealed) as ws_sealed,
	       coalesce(ws.secret_prev_sealed, we.secret_prev_sealed) as ws_prev_sealed,
	       coalesce(ws.secret_prev_until, we.secret_prev_until) as ws_prev_until
	from claimed c
	join events e on e.merchant_id = c.merchant_id and e.event_seq = c.event_seq
	-- The merchants' shop numbers and sealed signing keys in the same
	-- statement, though internal/merchant owns the table: the claim is
	-- the callback path's one round trip per batch (bench row 6a;
	-- internal/archtest tables_test.go names this read).
	join merchants m on m.id = c.merchant_id
	-- Each secret row is a lateral probe whose endpoint test is a
	-- one-time filter: endpoint one's deliveries never probe
	-- webhook_endpoints, the others' never webhook_secrets (as plain
	-- left joins, every delivery probed both; docs/performance.md).
	left join lateral (
		select ws.rolled_at, ws.secret_sealed, ws.secret_prev_sealed, ws.secret_prev_until from webhook_secrets ws
		where c.endpoint_no = 1 and ws.merchant_id = c.merchant_id
		offset 0) ws on true
	left join lateral (
		select we.rolled_at, we.secret_sealed, we.secret_prev_sealed, we.secret_prev_until from webhook_endpoints we
		where c.endpoint_no > 1 and we.merchant_id = c.merchant_id and we.endpoint_no = c.endpoint_no
		offset 0) we on true`
