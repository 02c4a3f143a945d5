package httplimits

// Defaults of RateLimit (GATEWAY_RATE_LIMIT_RPS, GATEWAY_RATE_LIMIT_BURST).
const (
	RateLimitRPSDefault   = 200
	RateLimitBurstDefault = 400
)

// RateLimit sizes each merchant's token bucket on /shop (api's rate
// limiter, docs/security.md "Rate limits"): RPS requests per second
// sustained, Burst requests at once on top of an idle bucket. The zero
// value means the defaults (200 and 400); a negative RPS turns the limit
// off.
type RateLimit struct {
	RPS   float64
	Burst int
}

// WithDefaults gives each zero field its default (a negative RPS stays:
// it means no limit).
func (r RateLimit) WithDefaults() RateLimit {
	if r.RPS == 0 {
		r.RPS = RateLimitRPSDefault
	}
	if r.Burst <= 0 {
		r.Burst = RateLimitBurstDefault
	}
	return r
}
