package postings

// Reason is a stable, machine-readable detail of an Error inside its code:
// the API picks the business code of a failure by (code, reason) in one
// table (api/envelope.go), so a reason is a constant here, never a string
// literal where the error is made or matched (TestReasonsAreConstants).
type Reason string

// The reasons of the gateway's failures, by the object or rule at fault.
// Those the API gives to the errors it makes itself (a route not found, a
// body too large, …) are declared in api/.
const (
	// Objects that do not exist, or belong to another merchant (ENOTFOUND).
	ReasonMerchant      Reason = "merchant"
	ReasonCard          Reason = "card"
	ReasonAuthorization Reason = "authorization"
	ReasonRemittance    Reason = "remittance"
	ReasonEvent         Reason = "event"
	// A merchant's webhook endpoint (issue 32).
	ReasonWebhookEndpoint Reason = "webhook_endpoint"

	// What the merchant may not do (EFORBIDDEN).
	ReasonCurrency Reason = "currency" // not one of the merchant's currencies
	ReasonBIN      Reason = "bin"      // the BIN entry is not open to the merchant
	ReasonFXPair   Reason = "fx_pair"  // no operator rate for the pair

	// States that refuse the operation (ESTATE).
	ReasonCardFrozen          Reason = "card_frozen"
	ReasonCardCancelled       Reason = "card_cancelled"
	ReasonFXRateStale         Reason = "fx_rate_stale"
	ReasonAuthorizationClosed Reason = "authorization_closed"
	ReasonRemittanceState     Reason = "remittance_state"
	ReasonNoCallbackURL       Reason = "no_callback_url" // an event replayed with nowhere to send it

	// Limits (ELIMIT).
	ReasonCardBalanceMax    Reason = "card_balance_max"
	ReasonDailyCardIssue    Reason = "daily_card_issue"
	ReasonRemittanceMax     Reason = "remittance_max"
	ReasonNetworkMessageMax Reason = "network_message_max"
	ReasonOverCapture       Reason = "over_capture"
	ReasonRefundUnmatched   Reason = "refund_unmatched"
	// A merchant's 17th webhook endpoint (delivery.EndpointsMax).
	ReasonWebhookEndpointsMax Reason = "webhook_endpoints_max"

	// Conflicts (ECONFLICT).
	ReasonIdempotencyMismatch Reason = "idempotency_mismatch" // a key reused with another request
	ReasonIdempotencyRace     Reason = "idempotency_race"     // a key stored concurrently
	ReasonMessageID           Reason = "message_id"           // a network message id reused after its key expired
	ReasonShopNo              Reason = "shop_no"              // a shop number drawn twice

	// A database that answers but could not do the work in time
	// (EUNAVAILABLE): the request did nothing, and a retry with the same
	// key may succeed. An outage has no reason.
	ReasonLockTimeout      Reason = "lock_timeout"      // 55P03: a lock not granted within lock_timeout
	ReasonStatementTimeout Reason = "statement_timeout" // 57014: statement_timeout, or a cancelled statement
	ReasonContention       Reason = "contention"        // 40001, 40P01: after the writer's retries
	ReasonOutcomeUnknown   Reason = "outcome_unknown"   // the caller gave up, or COMMIT failed: retry to learn
	ReasonMerchantMoving   Reason = "merchant_moving"   // 55P03 of a move's fence (sql/0037): that merchant's batch only
)

// InsufficientReason is the reason of an EINSUFFICIENT error: the type of
// the account that would go below zero.
func InsufficientReason(t AccountType) Reason { return Reason(t) }
