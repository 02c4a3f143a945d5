// Package config is the gateway's one configuration: every setting of
// `gateway serve`, read once from its flags and the environment (a flag
// wins over its variable, a variable over the default), checked as it is
// read, and handed down as one struct. A value that does not parse or is
// out of range stops the gateway at start with an error naming the
// variable and the flag; nothing falls back to a default silently.
//
// Adding a setting is one place: a field of Config and its line in
// settings (settings.go). Its flag, its line in --help, its refusal and its
// place in the start-up line follow from that line.
package config

import (
	"log/slog"
	"net/netip"
	"regexp"
	"time"

	"github.com/paygate/gateway/internal/callbackurl"
	"github.com/paygate/gateway/internal/httplimits"
	"github.com/paygate/gateway/internal/network"
)

// Config is every setting of the gateway (docs/operations.md, "Settings").
// The zero value is not a configuration: use Parse or FromEnvironment.
type Config struct {
	// Where the data is.
	DatabaseURL string // DATABASE_URL; "": the embedded cluster in DataDir/pg
	DataDir     string // GATEWAY_DATA_DIR
	DataKey     []byte // GATEWAY_DATA_KEY, 32 bytes; nil: the key file in DataDir
	// Cells are GATEWAY_CELLS (docs/scaling.md, "Cells"); nil: one
	// implicit cell, DATABASE_URL or the embedded cluster, as always.
	Cells []Cell
	// CellsRead are GATEWAY_CELLS_READ_URLS: a standby per cell, by name,
	// which ForCell gives each cell as its ReadURL.
	CellsRead []Cell

	// Reads from a hot standby (docs/ha.md, "Reads from the standby").
	ReadURL    string // DATABASE_READ_URL; "": every read on the primary
	ReadWaitMs int    // DATABASE_READ_WAIT_MS: how long a read waits for the standby's replay; 0: not at all

	// The listeners.
	Addr          string         // GATEWAY_ADDR
	InternalAddr  string         // GATEWAY_INTERNAL_ADDR
	InternalToken string         // GATEWAY_INTERNAL_TOKEN; "": the token file in DataDir
	MetricsToken  string         // GATEWAY_METRICS_TOKEN; "": GET /metrics (internal listener) needs no token
	BackupRepo    string         // GATEWAY_BACKUP_REPO; "": no backup age metric
	ConsoleAddr   string         // GATEWAY_CONSOLE_ADDR; "off": no console
	PlainHTTP     bool           // GATEWAY_PLAIN_HTTP
	TLSCert       string         // GATEWAY_TLS_CERT; "" with TLSKey "": self-signed
	TLSKey        string         // GATEWAY_TLS_KEY
	PprofAddr     string         // GATEWAY_PPROF_ADDR; "": none
	LogLevel      slog.Level     // GATEWAY_LOG_LEVEL
	Demo          bool           // GATEWAY_DEMO
	NoWorkers     bool           // GATEWAY_NO_WORKERS
	Proxies       []netip.Prefix // GATEWAY_TRUSTED_PROXIES

	// The console's sessions and sign-in bounds (docs/console.md).
	ConsoleIdleTimeout  time.Duration // GATEWAY_CONSOLE_IDLE_TIMEOUT
	ConsoleSessionMax   time.Duration // GATEWAY_CONSOLE_SESSION_MAX
	ConsoleLockoutTries int           // GATEWAY_CONSOLE_LOCKOUT_TRIES
	ConsoleLockoutFor   time.Duration // GATEWAY_CONSOLE_LOCKOUT_DURATION
	ConsoleAddressTries int           // GATEWAY_CONSOLE_ADDRESS_TRIES

	// The HTTP surface's bounds.
	RateLimit httplimits.RateLimit // GATEWAY_RATE_LIMIT_RPS, GATEWAY_RATE_LIMIT_BURST
	Limits    httplimits.Limits    // GATEWAY_REQUEST_TIMEOUT and the others of httplimits.Limits

	// Callbacks: the addresses a callback URL may reach.
	CallbackAllow callbackurl.AllowList // GATEWAY_CALLBACK_ALLOW_PRIVATE, GATEWAY_CALLBACK_ALLOW_PREFIXES

	// The ledger's writer.
	LedgerShards      int           // GATEWAY_LEDGER_SHARDS; 0: one per two CPUs
	LedgerBatchWindow time.Duration // GATEWAY_LEDGER_BATCH_WINDOW

	// A silent database and shutdown (docs/ha.md, docs/operations.md).
	DBCommitTimeout  time.Duration // GATEWAY_DB_COMMIT_TIMEOUT
	DBProbeTimeout   time.Duration // GATEWAY_DB_PROBE_TIMEOUT
	DBTCPUserTimeout time.Duration // GATEWAY_DB_TCP_USER_TIMEOUT
	ShutdownDrain    time.Duration // GATEWAY_SHUTDOWN_DRAIN

	// The domains.
	FXRateMaxAge  time.Duration  // GATEWAY_FX_RATE_MAX_AGE
	HoldExpiry    time.Duration  // GATEWAY_HOLD_EXPIRY
	NetworkBounds network.Bounds // GATEWAY_NETWORK_*

	// The remittance lifecycle and the simulated rail.
	RemitScreeningDelay  time.Duration  // GATEWAY_REMIT_SCREENING_DELAY
	RemitInFlight        time.Duration  // GATEWAY_REMIT_IN_FLIGHT
	RailManual           bool           // GATEWAY_RAIL_MODE=manual
	RailReturnPattern    *regexp.Regexp // GATEWAY_RAIL_RETURN_PATTERN
	RailReturnReason     string         // GATEWAY_RAIL_RETURN_REASON
	RequireSanctionsList bool           // GATEWAY_REQUIRE_SANCTIONS_LIST

	// Signed checkpoints of the journal heads (docs/audit.md#checkpoints).
	CheckpointKeyFile string        // GATEWAY_CHECKPOINT_KEY_FILE; "": no checkpoint worker
	CheckpointEvery   time.Duration // GATEWAY_CHECKPOINT_EVERY

	// Go's collector, as the operator set it ("": serve's own tuning).
	GOGC       string // GOGC
	GOMEMLIMIT string // GOMEMLIMIT

	// effective is every setting's value and where it came from, in the
	// order of settings, for the start-up line (Attrs).
	effective []effective
}

// Source is where a setting's value came from.
type Source string

// The sources of a value.
const (
	SourceDefault Source = "default"
	SourceEnv     Source = "env"
	SourceFlag    Source = "flag"
)

// effective is one setting as it applies.
type effective struct {
	s     *setting
	value string
	from  Source
}
