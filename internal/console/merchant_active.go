package console

import "context"

// A disabled merchant (gateway merchant disable, or the operator's Disable
// button) keeps nothing in the console (docs/security.md, "Disabled
// merchants"): its users cannot sign in — the login refuses them as it
// refuses a disabled user, after the same password hash, so the refusal
// looks and costs the same as the generic one — and their sessions end at
// their next request. Both checks read the merchant's status in the query
// that loads the user (userByLogin, touchSession): nothing is cached, so a
// disable applies to the very next request of any console process.
//
// merchantDisabledSQL is true for a user of a merchant that is not ACTIVE
// (a house user, with no merchant, is never one). It is used inside those
// queries, where m is the user's merchant, left-joined.
const merchantDisabledSQL = `coalesce(m.status, 'ACTIVE') <> 'ACTIVE'`

// endMerchantSessions deletes the sessions of a merchant's users, at once
// when the operator disables the merchant from the console (touchSession
// would end each at its next request anyway, whoever disabled it).
func (s *store) endMerchantSessions(ctx context.Context, merchant int64) error {
	_, err := s.db.ExecContext(ctx, `delete from console_sessions
		where user_id in (select id from console_users where merchant_id = $1)`, merchant)
	return err
}
