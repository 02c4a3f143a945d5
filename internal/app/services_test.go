package app

import "github.com/paygate/gateway/internal/gatewaytest"

// The tests above the core build the domains with the app's constructor:
// gatewaytest's Gateway is the app's Services, not a copy that a new domain
// could miss (this fails to compile when they are two types).
var _ *Services = (*gatewaytest.Gateway)(nil)
