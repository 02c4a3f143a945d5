package main

import (
	"context"
	"errors"
	"flag"
	"strings"

	"github.com/paygate/gateway/api"
	"github.com/paygate/gateway/internal/app"
	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/config"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/postings"
)

// The operator's commands: merchant settings, the BIN catalogue and each
// merchant's access to it, FX rates. They print what they changed as JSON.

// withLedger parses fs, opens the ledger, runs fn and closes it again; a
// domain error from fn is shown naming its flag (cliError).
func withLedger(ctx context.Context, e *env, fs *flag.FlagSet, args []string, fn func(l *app.Services) error) error {
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	if err := e.chooseCell(ctx); err != nil {
		return cliError(err)
	}
	s, l, err := openLedger(ctx, e)
	if err != nil {
		return err
	}
	defer s.Close()
	defer l.Close()
	return cliError(fn(l))
}

// withMerchant is withLedger for the commands that take --shop-no: it
// resolves the merchant before calling fn.
func withMerchant(ctx context.Context, e *env, name, summary string, args []string,
	define func(fs *flag.FlagSet), fn func(l *app.Services, m *merchant.Merchant) error) error {
	fs := newFlags(e, name, summary)
	shopNo := fs.String("shop-no", "", "the merchant's shop number (required)")
	if define != nil {
		define(fs)
	}
	// With cells, the merchant's cell is the directory's.
	e.chooser = func(ctx context.Context, cfg *config.Config) (string, error) {
		if *shopNo == "" {
			return "", usageError("--shop-no is required")
		}
		return cellOfShop(ctx, e, cfg, *shopNo)
	}
	return withLedger(ctx, e, fs, args, func(l *app.Services) error {
		if *shopNo == "" {
			return usageError("--shop-no is required")
		}
		m, err := l.MerchantByShopNo(ctx, *shopNo)
		if err != nil {
			return err
		}
		return fn(l, m)
	})
}

// operatorProfile is what the operator's merchant commands print: the
// answer of GET /shop/account, field for field (api.AccountView), and the
// settings only the operator sees.
type operatorProfile struct {
	api.AccountView
	IPWhitelist []string `json:"ipWhitelist"`
	CallbackURL string   `json:"callbackUrl"`
}

func printProfile(ctx context.Context, e *env, l *app.Services, m *merchant.Merchant) error {
	p, err := l.Cards.Profile(ctx, m.ID)
	if err != nil {
		return err
	}
	return printJSON(e, operatorProfile{AccountView: api.NewAccountView(p),
		IPWhitelist: append([]string{}, p.Merchant.IPWhitelist...), CallbackURL: p.Merchant.CallbackURL})
}

func cmdMerchantShow(ctx context.Context, e *env, args []string) error {
	return withMerchant(ctx, e, "merchant show", "Print a merchant's settings, balances and limits.", args, nil,
		func(l *app.Services, m *merchant.Merchant) error { return printProfile(ctx, e, l, m) })
}

func cmdMerchantStatus(status string) func(ctx context.Context, e *env, args []string) error {
	verb := map[string]string{merchant.Active: "enable", merchant.Disabled: "disable"}[status]
	return func(ctx context.Context, e *env, args []string) error {
		return withMerchant(ctx, e, "merchant "+verb,
			"Set the merchant "+status+" (a disabled merchant's /shop requests answer 403).", args, nil,
			func(l *app.Services, m *merchant.Merchant) error {
				if err := l.SetMerchantStatus(ctx, m.ID, status); err != nil {
					return err
				}
				return printProfile(ctx, e, l, m)
			})
	}
}

func cmdMerchantWhitelist(ctx context.Context, e *env, args []string) error {
	var ips *string
	return withMerchant(ctx, e, "merchant whitelist",
		"Replace the IP whitelist of /shop requests (addresses and CIDR prefixes, IPv4 and IPv6; empty allows any).", args,
		func(fs *flag.FlagSet) {
			ips = fs.String("ip-whitelist", "", "comma-separated addresses or CIDR prefixes; empty clears")
		},
		func(l *app.Services, m *merchant.Merchant) error {
			if err := l.SetIPWhitelist(ctx, m.ID, splitList(*ips)); err != nil {
				return err
			}
			return printProfile(ctx, e, l, m)
		})
}

func cmdMerchantCallbackURL(ctx context.Context, e *env, args []string) error {
	var url *string
	return withMerchant(ctx, e, "merchant callback-url",
		"Set the merchant's default callback URL (for remittance-status callbacks).", args,
		func(fs *flag.FlagSet) {
			url = fs.String("url", "", "public http or https URL (docs/callbacks.md); empty removes it")
		},
		func(l *app.Services, m *merchant.Merchant) error {
			if err := checkCallbackURL(e, "url", *url); err != nil {
				return err
			}
			if err := l.SetCallbackURL(ctx, m.ID, *url); err != nil {
				return err
			}
			return printProfile(ctx, e, l, m)
		})
}

// checkCallbackURL refuses a callback URL the sender would refuse, with
// the rules and the allow list of the gateway (callbackurl.Validate and
// the GATEWAY_CALLBACK_ALLOW_* variables of this process), naming the flag.
// "" is no URL.
func checkCallbackURL(e *env, flagField, url string) error {
	if url == "" {
		return nil
	}
	cfg, err := e.config()
	if err != nil {
		return err
	}
	if err := callbackurl.Validate(url, cfg.CallbackAllow); err != nil {
		var ue *callbackurl.Error
		if !errors.As(err, &ue) {
			return postings.FieldErrorf(flagField, "is not a valid callback URL")
		}
		return postings.FieldErrorf(flagField, "%s", ue.Reason)
	}
	return nil
}

func cmdMerchantKYB(ctx context.Context, e *env, args []string) error {
	var tier *string
	return withMerchant(ctx, e, "merchant kyb",
		"Set the merchant's KYB tier; its limits in every currency go back to the tier's defaults.", args,
		func(fs *flag.FlagSet) { tier = fs.String("tier", "", "TIER_1, TIER_2 or TIER_3 (required)") },
		func(l *app.Services, m *merchant.Merchant) error {
			if err := l.Cards.SetKYBTier(ctx, m.ID, strings.ToUpper(*tier)); err != nil {
				return err
			}
			return printProfile(ctx, e, l, m)
		})
}

func cmdMerchantLimits(ctx context.Context, e *env, args []string) error {
	var currency, balanceMax, issueMax *string
	return withMerchant(ctx, e, "merchant limits", "Set the merchant's limits in one currency.", args,
		func(fs *flag.FlagSet) {
			currency = fs.String("currency", "", "ISO 4217 code (required)")
			balanceMax = fs.String("card-balance-max", "", "largest available balance of one card, e.g. 10000.00 (required)")
			issueMax = fs.String("daily-card-issue-max", "", "card funding per UTC day, e.g. 50000.00 (required)")
		},
		func(l *app.Services, m *merchant.Merchant) error {
			cur, err := postings.LookupCurrency(strings.ToUpper(*currency))
			if err != nil {
				return err
			}
			bal, err := postings.ParseSignedAmount(*balanceMax, cur)
			if err != nil {
				return postings.FieldErrorf("card_balance_max", "%s", postings.AsError(err).Message)
			}
			iss, err := postings.ParseSignedAmount(*issueMax, cur)
			if err != nil {
				return postings.FieldErrorf("daily_card_issue_max", "%s", postings.AsError(err).Message)
			}
			if err := l.Cards.SetLimit(ctx, m.ID, cur.Code, bal, iss); err != nil {
				return err
			}
			return printProfile(ctx, e, l, m)
		})
}

func cmdBINList(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "bin list", "List the BIN catalogue.")
	return withEveryCell(ctx, e, fs, args, func(l *app.Services) (any, error) { return l.Cards.BINs(ctx) })
}

func cmdBINAdd(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "bin add", "Add a BIN entry to the catalogue, or change one (network, enabled).")
	bin := fs.String("bin", "", "6 to 8 digits (required)")
	currency := fs.String("currency", "", "ISO 4217 code (required)")
	network := fs.String("network", "", "VISA or MASTERCARD (required)")
	disabled := fs.Bool("disabled", false, "add it disabled (closed to every merchant)")
	// Every cell's catalogue (cells_operator.go).
	return withEveryCell(ctx, e, fs, args, func(l *app.Services) (any, error) {
		b := cards.BIN{Bin: *bin, Currency: strings.ToUpper(*currency), Network: strings.ToUpper(*network), Type: "VIRTUAL", Enabled: !*disabled}
		return b, l.Cards.UpsertBIN(ctx, b)
	})
}

func cmdBINAccess(ctx context.Context, e *env, args []string) error {
	var bin, currency, mode *string
	return withMerchant(ctx, e, "bin access",
		"Open or close one BIN entry to a merchant (by default a merchant may use the enabled BINs of its currencies).", args,
		func(fs *flag.FlagSet) {
			bin = fs.String("bin", "", "the BIN (required)")
			currency = fs.String("currency", "", "the BIN entry's currency (required)")
			mode = fs.String("mode", "", "allow, deny or default (required)")
		},
		func(l *app.Services, m *merchant.Merchant) error {
			var allowed *bool
			switch *mode {
			case "allow", "deny":
				v := *mode == "allow"
				allowed = &v
			case "default":
			default:
				return postings.FieldErrorf("mode", "must be allow, deny or default")
			}
			if err := l.Cards.SetBINAccess(ctx, m.ID, *bin, strings.ToUpper(*currency), allowed); err != nil {
				return err
			}
			bins, err := l.Cards.MerchantBINs(ctx, m.ID)
			if err != nil {
				return err
			}
			return printJSON(e, map[string]any{"shopNo": m.ShopNo, "bins": bins})
		})
}

func cmdFXSet(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "fx set", "Set the rate of a currency pair: one unit of BASE is RATE units of QUOTE.")
	pair := fs.String("pair", "", "BASE/QUOTE, e.g. USD/EUR (required)")
	rate := fs.String("rate", "", "mid-market rate, a decimal such as 0.92 (required)")
	spread := fs.Int64("spread-bps", 50, "spread taken off the rate in the gateway's favour, in basis points")
	// Every cell's rates (cells_operator.go).
	return withEveryCell(ctx, e, fs, args, func(l *app.Services) (any, error) {
		base, quote, ok := strings.Cut(strings.ToUpper(*pair), "/")
		if !ok {
			return nil, usageError("--pair must be BASE/QUOTE, e.g. USD/EUR")
		}
		return l.FX.Set(ctx, base, quote, *rate, *spread)
	})
}

func cmdFXList(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "fx list", "List the FX rates.")
	return withEveryCell(ctx, e, fs, args, func(l *app.Services) (any, error) { return l.FX.List(ctx) })
}
