package main

import (
	"log/slog"

	"github.com/paygate/gateway/internal/config"
)

// warnUnknownVariables logs one warning per GATEWAY_* variable of the
// environment that no setting reads, with the setting it is nearest to:
// a misspelt GATEWAY_HOLD_EXPIRE used to be ignored in silence, and the
// gateway ran on the default the operator meant to change (issue 31,
// finding 8). A warning, not a refusal: a variable left over from another
// version must not stop a restart.
func warnUnknownVariables(log *slog.Logger, environ []string) {
	for _, u := range config.UnknownVariables(environ) {
		if u.DidYouMean != "" {
			log.Warn("unknown variable "+u.Name+" is ignored; did you mean "+u.DidYouMean+"?",
				"variable", u.Name, "did_you_mean", u.DidYouMean)
			continue
		}
		log.Warn("unknown variable "+u.Name+" is ignored: no setting reads it", "variable", u.Name)
	}
}
