// Package merchant is the merchants of the gateway: their configuration,
// their credentials and the authentication of /shop requests with its
// cache, the rolls of their keys, the operator's changes to their settings,
// and the sealing of secrets at rest with the data key (sealer.go). The
// journal core keeps only what it needs of a merchant: its head and what a
// batch reads with it (ledger.Merchant); a merchant's journal is opened in
// the transaction that creates it (ledger.OpenJournal). Issue 28, point 1.
package merchant

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// Merchant statuses.
const (
	Active   = "ACTIVE"
	Disabled = "DISABLED"
)

// Service is the merchants of a ledger's database.
type Service struct {
	l      *ledger.Ledger
	sealer *Sealer
	// auth caches successful authentications; touches are the
	// authentication times not written yet (auth.go).
	auth    authCache
	touches touches
	// authTrace, when set, is told each step authenticate takes. Tests
	// use it to prove that every failure takes the same steps.
	authTrace func(step string)
	// cellNumber is the cell this database is (internal/cells), 1–9; 0
	// is the one implicit cell of an installation without cells.
	cellNumber int
}

// New returns the merchants of l's database, sealing their signing keys
// with sealer (nil: creating a merchant or rolling a key fails).
func New(l *ledger.Ledger, sealer *Sealer) *Service { return &Service{l: l, sealer: sealer} }

// Close writes the authentication times not written yet.
func (s *Service) Close() { s.flushTouches() }

// Sealer encrypts and opens the secrets at rest; nil when none is
// configured.
func (s *Service) Sealer() *Sealer { return s.sealer }

// Merchant is a merchant's configuration.
type Merchant struct {
	ID          int64
	ShopNo      string
	Name        string
	Currencies  []string
	Status      string
	IPWhitelist []string // addresses and CIDR prefixes; empty allows every address
	CallbackURL string
	KYBTier     string
	CreatedAt   time.Time
	// Test marks a test merchant: its cards and remittances are driven
	// through /shop/sandbox (docs/api.md, "The sandbox"). Set at creation,
	// never changed (sql/0013_sandbox.sql).
	Test bool
	// LastAuthenticatedAt is the last successful /shop authentication
	// (precise to a second), nil before the first.
	LastAuthenticatedAt *time.Time
	// APIVersion is the X-Api-Version the merchant is pinned to: the
	// current one when it was created (docs/versioning.md). Read by
	// Authenticate and the merchant reads, not by the writer's head lock.
	APIVersion string
	// ByPreviousKey is set by Authenticate when the request was
	// authenticated with the previous public key of a roll's overlap
	// (keyroll.go): a roll then keeps that key.
	ByPreviousKey bool
}

// HasCurrency reports whether cur is one of the merchant's currencies.
func (m *Merchant) HasCurrency(cur string) bool {
	for _, c := range m.Currencies {
		if c == cur {
			return true
		}
	}
	return false
}

// merchantColumns are the columns merchantRow scans, from alias m.
const merchantColumns = `m.id, m.shop_no, m.name, m.currencies, m.status, m.ip_whitelist,
	coalesce(m.callback_url, '') as callback_url, m.kyb_tier, m.created_at, m.last_authenticated_at, m.api_version, m.test`

type merchantRow struct {
	ID          int64      `bun:"id"`
	ShopNo      string     `bun:"shop_no"`
	Name        string     `bun:"name"`
	Currencies  []string   `bun:"currencies,array"`
	Status      string     `bun:"status"`
	IPWhitelist []string   `bun:"ip_whitelist,array"`
	CallbackURL string     `bun:"callback_url"`
	KYBTier     string     `bun:"kyb_tier"`
	CreatedAt   time.Time  `bun:"created_at"`
	LastAuthAt  *time.Time `bun:"last_authenticated_at"`
	APIVersion  string     `bun:"api_version"`
	Test        bool       `bun:"test"`
}

func (r merchantRow) toMerchant() Merchant {
	m := Merchant{ID: r.ID, ShopNo: r.ShopNo, Name: r.Name, Currencies: r.Currencies, Status: r.Status,
		IPWhitelist: r.IPWhitelist, CallbackURL: r.CallbackURL, KYBTier: r.KYBTier, CreatedAt: r.CreatedAt.UTC(),
		APIVersion: r.APIVersion, Test: r.Test}
	if r.LastAuthAt != nil {
		t := r.LastAuthAt.UTC()
		m.LastAuthenticatedAt = &t
	}
	return m
}

// Spec is what an operator gives to create a merchant.
type Spec struct {
	Name        string
	Currencies  []string
	IPWhitelist []string
	CallbackURL string
	// APIVersion pins the merchant to an API version; empty pins it to the
	// current one (the column's default, docs/versioning.md).
	APIVersion string
	// Test creates a test merchant (Merchant.Test).
	Test bool
}

// Credentials are a merchant's keys, shown once at creation: the public key
// authenticates /shop requests, the private key signs callbacks.
type Credentials struct {
	ShopNo     string `json:"shopNo"`
	PublicKey  string `json:"publicKey"`
	PrivateKey string `json:"privateKey"`
}

// Limits of merchant configuration.
const (
	merchantNameCharsMax = 200
	currenciesMax        = 32
	ipWhitelistMax       = 64
	shopNoAttemptsMax    = 5
)

// CreateMerchant creates a merchant and its journal head, and returns its
// credentials. Only the SHA-256 of the public key is stored; the private key
// is stored sealed, because the gateway needs it to sign callbacks.
func (s *Service) CreateMerchant(ctx context.Context, spec Spec) (*Merchant, *Credentials, error) {
	if err := validateMerchantSpec(&spec); err != nil {
		return nil, nil, err
	}
	if s.sealer == nil {
		return nil, nil, errors.New("merchant: no data key configured")
	}
	pub, priv := "pk_"+randomToken(32), "sk_"+randomToken(32)
	pubSum := sha256.Sum256([]byte(pub))
	for attempt := 0; ; attempt++ {
		shopNo := newShopNo(s.cellNumber)
		var id int64
		err := s.l.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			// Without a version the column's default pins the merchant to
			// the current one.
			version := "default"
			if spec.APIVersion != "" {
				version = "?"
			}
			err := tx.NewRaw(`
				insert into merchants (shop_no, name, currencies, public_key_sha256, private_key_sealed, ip_whitelist, callback_url, test, api_version)
				values (?, ?, ?, ?, ?, ?, nullif(?, ''), ?, `+version+`)
				returning id`,
				append([]any{shopNo, spec.Name, pgdialect.Array(spec.Currencies), pubSum[:],
					s.sealer.SealSigningKey(priv, shopNo),
					pgdialect.Array(spec.IPWhitelist), spec.CallbackURL, spec.Test}, versionArgs(spec.APIVersion)...)...).Scan(ctx, &id)
			if err != nil {
				return ledger.MapError(err)
			}
			// Its journal head, and the domains' rows of it (the card
			// domain: the limits of its KYB tier), in the same transaction.
			return s.l.OpenJournal(ctx, tx, &ledger.Merchant{ID: id, ShopNo: shopNo, Currencies: spec.Currencies,
				CallbackURL: spec.CallbackURL})
		})
		if postings.AsError(err).Reason == postings.ReasonShopNo && attempt < shopNoAttemptsMax {
			continue // a random shop number collided: draw another
		}
		if err != nil {
			return nil, nil, err
		}
		m, err := s.MerchantByID(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		return m, &Credentials{ShopNo: shopNo, PublicKey: pub, PrivateKey: priv}, nil
	}
}

func validateMerchantSpec(spec *Spec) error {
	spec.Name = strings.TrimSpace(spec.Name)
	if spec.Name == "" {
		return postings.FieldErrorf("name", "must have 1 to %d characters", merchantNameCharsMax)
	}
	if err := postings.CheckText("name", spec.Name, merchantNameCharsMax); err != nil {
		return err
	}
	if len(spec.Currencies) == 0 || len(spec.Currencies) > currenciesMax {
		return postings.FieldErrorf("currencies", "must list 1 to %d currencies", currenciesMax)
	}
	// Normalised into a copy: the caller's slice is not ours to change (two
	// merchants created at once from one list raced on it under -race).
	spec.Currencies = slices.Clone(spec.Currencies)
	seen := map[string]bool{}
	for i, c := range spec.Currencies {
		c = strings.ToUpper(strings.TrimSpace(c))
		if _, err := postings.LookupCurrency(c); err != nil {
			return postings.FieldErrorf("currencies", "%q is not a supported ISO 4217 currency code", c)
		}
		if seen[c] {
			return postings.FieldErrorf("currencies", "%s is listed twice", c)
		}
		seen[c] = true
		spec.Currencies[i] = c
	}
	if spec.APIVersion != "" && !apiVersionRe.MatchString(spec.APIVersion) {
		return postings.FieldErrorf("api_version", "must be a date, YYYY-MM-DD")
	}
	wl, err := NormalizeIPWhitelist(spec.IPWhitelist)
	if err != nil {
		return err
	}
	spec.IPWhitelist = wl
	return nil
}

// apiVersionRe is the shape of an API version; which versions exist is the
// API's table (api/versions.go).
var apiVersionRe = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// versionArgs is the api_version argument of the insert, none for the
// column's default.
func versionArgs(v string) []any {
	if v == "" {
		return nil
	}
	return []any{v}
}

// NormalizeIPWhitelist checks addresses and CIDR prefixes (IPv4 and IPv6) and
// returns them in canonical form; a bare address becomes a /32 or /128.
func NormalizeIPWhitelist(in []string) ([]string, error) {
	if len(in) > ipWhitelistMax {
		return nil, postings.FieldErrorf("ip_whitelist", "has more than %d entries", ipWhitelistMax)
	}
	out := make([]string, 0, len(in))
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked().String())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, postings.FieldErrorf("ip_whitelist", "%q is neither an IP address nor a CIDR prefix", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()).String())
	}
	return out, nil
}

// MerchantByID reads a merchant.
func (s *Service) MerchantByID(ctx context.Context, id int64) (*Merchant, error) {
	return s.merchantWhere(ctx, "m.id = ?", id)
}

// MerchantByShopNo reads a merchant by shop number; ENOTFOUND if unknown.
func (s *Service) MerchantByShopNo(ctx context.Context, shopNo string) (*Merchant, error) {
	return s.merchantWhere(ctx, "m.shop_no = ?", shopNo)
}

func (s *Service) merchantWhere(ctx context.Context, where string, arg any) (*Merchant, error) {
	var r merchantRow
	err := s.l.DB().NewRaw(`select `+merchantColumns+` from merchants m where `+where, arg).Scan(ctx, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, postings.ReasonErrorf(postings.ENOTFOUND, postings.ReasonMerchant, "merchant not found")
	}
	if err != nil {
		return nil, ledger.MapError(err)
	}
	m := r.toMerchant()
	return &m, nil
}

// newShopNo draws a shop number: "SH" and ten digits, the first never 0.
// In a cell (cell 1–9) the first digit is the cell's number, so that two
// cells never draw the same shop number (docs/scaling.md, "Ids"); without
// cells (cell 0) it is random, as it always was.
func newShopNo(cell int) string {
	if cell > 0 {
		n, err := rand.Int(rand.Reader, big.NewInt(1_000_000_000))
		if err != nil {
			panic(err)
		}
		return fmt.Sprintf("SH%d%09d", cell, n.Int64())
	}
	n, err := rand.Int(rand.Reader, big.NewInt(9_000_000_000))
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("SH%010d", n.Int64()+1_000_000_000)
}

// IsShopNo says whether s has the shape newShopNo draws: "SH" and ten
// digits. A value of another shape names no merchant, so a caller may
// answer it without a query (the cells' router: docs/scaling.md).
func IsShopNo(s string) bool {
	if len(s) != 12 || s[:2] != "SH" {
		return false
	}
	for i := 2; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// randomToken returns n random bytes, base64url without padding.
func randomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
