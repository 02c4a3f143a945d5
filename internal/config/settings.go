package config

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance/rules"
)

// Defaults that other commands share (the network simulator calls the
// internal API where serve listens).
const (
	AddrDefault         = "127.0.0.1:8443"
	InternalAddrDefault = "127.0.0.1:8444"
	// ConsoleAddrDefault is loopback: the console is for people on this
	// machine, or behind a proxy the operator sets up on purpose.
	ConsoleAddrDefault = "127.0.0.1:8445"
	DataDirDefault     = "var"
)

// Bounds of the settings that are not another package's.
const (
	// consoleSessionMaxMax and consoleLockoutForMax bound the console's
	// durations: a session of more than a week, or a lockout of more than a
	// day, is a typo rather than a policy.
	consoleSessionMaxMax = 7 * 24 * time.Hour
	consoleLockoutForMax = 24 * time.Hour

	// ReadWaitMsMax bounds DATABASE_READ_WAIT_MS: a request's whole budget
	// is 60 s, and a wait longer than a few seconds is better spent on the
	// primary.
	ReadWaitMsMax = 10_000

	ledgerShardsMax       = 1024
	internalTokenBytesMin = 16
)

// settings is every setting, in the order of --help and the start-up line.
// A setting's flag is its variable's name without GATEWAY_, in lower case
// with dashes (GATEWAY_HOLD_EXPIRY: --hold-expiry), unless it has none:
// secrets (a flag's value is visible in the process list), DATABASE_URL
// (it may hold a password), the read URL and its wait (DATABASE_* are the
// environment the operator's commands share) and Go's own GOGC and GOMEMLIMIT. To add a
// setting: a field of Config and one line here.
func (c *Config) settings() []*setting {
	return []*setting{
		text(&c.DatabaseURL, "DATABASE_URL", "", "a postgres:// URL; unset: the embedded PostgreSQL in $GATEWAY_DATA_DIR/pg",
			checkDatabaseURL).noFlag().mask(maskDatabaseURL),
		text(&c.ReadURL, "DATABASE_READ_URL", "", "a postgres:// URL of a hot standby for the bill, statements, audit and batch balance reads",
			checkDatabaseURL).noFlag().mask(maskDatabaseURL),
		text(nil, "GATEWAY_CELLS", "", "the cells, name=postgres://…,…, the first holding the directory; unset: one database (DATABASE_URL)",
			func(v string) (err error) {
				c.Cells, err = parseCells(v)
				return err
			}).noFlag().mask(maskCells),
		text(nil, "GATEWAY_CELLS_READ_URLS", "", "each cell's hot standby, name=postgres://…,…, as DATABASE_READ_URL is for one database; a cell not named reads its primary",
			func(v string) (err error) {
				c.CellsRead, err = parseCells(v)
				return err
			}).noFlag().mask(maskCells),
		integer(&c.ReadWaitMs, "DATABASE_READ_WAIT_MS", "250",
			"how long such a read waits for the standby to replay what it must see, in ms; past it, the primary", 0, ReadWaitMsMax).noFlag(),
		text(&c.DataDir, "GATEWAY_DATA_DIR", DataDirDefault, "the data directory: data key, TLS certificate, embedded PostgreSQL", nonEmpty),
		bytesHex(&c.DataKey, "GATEWAY_DATA_KEY", dataKeyBytes, "the data key, 64 hex digits; unset: $GATEWAY_DATA_DIR/data.key").noFlag().mask(maskAll),

		text(&c.Addr, "GATEWAY_ADDR", AddrDefault, "listen address of the /shop API", checkListenAddr),
		text(&c.InternalAddr, "GATEWAY_INTERNAL_ADDR", InternalAddrDefault, "listen address of the internal network API", checkListenAddr),
		text(&c.ConsoleAddr, "GATEWAY_CONSOLE_ADDR", ConsoleAddrDefault, "listen address of the web console, same TLS as the API; off: none",
			func(v string) error {
				if v == "off" {
					return nil
				}
				return checkListenAddr(v)
			}),
		duration(&c.ConsoleIdleTimeout, "GATEWAY_CONSOLE_IDLE_TIMEOUT", "30m", "a console session ends after this without a request", time.Minute),
		duration(&c.ConsoleSessionMax, "GATEWAY_CONSOLE_SESSION_MAX", "12h", "and this long after its login whatever the activity", time.Minute),
		integer(&c.ConsoleLockoutTries, "GATEWAY_CONSOLE_LOCKOUT_TRIES", "5", "consecutive failed console logins that lock a user", 1, 100),
		duration(&c.ConsoleLockoutFor, "GATEWAY_CONSOLE_LOCKOUT_DURATION", "15m", "how long a console lockout lasts", time.Minute),
		integer(&c.ConsoleAddressTries, "GATEWAY_CONSOLE_ADDRESS_TRIES", "20",
			"failed console logins from one address within the lockout duration that refuse the address", 1, 10_000),
		text(&c.InternalToken, "GATEWAY_INTERNAL_TOKEN", "", "the internal API's bearer token; unset: $GATEWAY_DATA_DIR/internal-token",
			checkToken).noFlag().mask(maskAll),
		text(&c.MetricsToken, "GATEWAY_METRICS_TOKEN", "", "the bearer token of GET /metrics on the internal listener; unset: none needed",
			checkToken).noFlag().mask(maskAll),
		text(&c.BackupRepo, "GATEWAY_BACKUP_REPO", "", "a pgBackRest repository directory (its pgbackrest.conf) whose newest backup's age is a metric",
			checkBackupRepo),
		boolean(&c.PlainHTTP, "GATEWAY_PLAIN_HTTP", "serve plain HTTP, only behind a TLS-terminating proxy"),
		text(&c.TLSCert, "GATEWAY_TLS_CERT", "", "PEM file of the server's certificate (chain); unset: self-signed", nil),
		text(&c.TLSKey, "GATEWAY_TLS_KEY", "", "PEM file of the certificate's key", nil),
		text(&c.PprofAddr, "GATEWAY_PPROF_ADDR", "", "a loopback address on which to serve Go's profiles", checkPprofAddr),
		logLevel(&c.LogLevel, "GATEWAY_LOG_LEVEL", "info", "debug, info, warn or error"),
		boolean(&c.Demo, "GATEWAY_DEMO",
			"make sure a funded demo merchant exists and write its credentials to $GATEWAY_DATA_DIR/demo-merchant.json"),
		boolean(&c.NoWorkers, "GATEWAY_NO_WORKERS", "serve requests only: no hold expiry, remittance lifecycle or callback delivery"),
		prefixes(&c.Proxies, "GATEWAY_TRUSTED_PROXIES", "comma-separated CIDR prefixes of proxies whose X-Forwarded-For is believed"),

		rps(&c.RateLimit.RPS, "GATEWAY_RATE_LIMIT_RPS", "200", "each merchant's requests per second on /shop; off: no limit"),
		integer(&c.RateLimit.Burst, "GATEWAY_RATE_LIMIT_BURST", "400", "each merchant's burst on /shop", 1, 1_000_000),
		duration(&c.Limits.RequestBudget, "GATEWAY_REQUEST_TIMEOUT", "60s", "a request's whole budget", positive),
		duration(&c.Limits.HeaderTimeout, "GATEWAY_HEADER_TIMEOUT", "10s", "the headers' share of the budget", positive),
		duration(&c.Limits.WriteReserve, "GATEWAY_WRITE_RESERVE", "5s", "the answer's share of the budget", positive),
		duration(&c.Limits.BodyIdleTimeout, "GATEWAY_BODY_IDLE_TIMEOUT", "10s", "the longest pause within a request body", positive),
		duration(&c.Limits.IdleTimeout, "GATEWAY_IDLE_TIMEOUT", "120s", "how long a kept-alive connection may wait for a request", positive),
		integer(&c.Limits.HeaderBytesMax, "GATEWAY_HEADER_BYTES_MAX", "65536", "request line and headers, in bytes",
			headerBytesMin, headerBytesMax),
		intOrOff(&c.Limits.ConnsPerClientMax, "GATEWAY_CONNS_PER_CLIENT_MAX", "128",
			"connections one client address holds at once; off: no bound", 1, connsPerClientMax),

		boolean(&c.CallbackAllow.AllowPrivate, "GATEWAY_CALLBACK_ALLOW_PRIVATE",
			"let callbacks reach loopback and private addresses (local development)"),
		prefixes(&c.CallbackAllow.Prefixes, "GATEWAY_CALLBACK_ALLOW_PREFIXES", "comma-separated CIDR prefixes callbacks may reach in any case"),

		integer(&c.LedgerShards, "GATEWAY_LEDGER_SHARDS", "0", "ledger writer shards; 0: one per two CPUs", 0, ledgerShardsMax),
		duration(&c.LedgerBatchWindow, "GATEWAY_LEDGER_BATCH_WINDOW", "0s",
			"how long a writer shard waits for more commands once it has one; 0: take what is queued", nonNegative),

		duration(&c.DBCommitTimeout, "GATEWAY_DB_COMMIT_TIMEOUT", "5s",
			"how long a COMMIT may go unanswered; past it the outcome is unknown and the connection discarded", positive),
		duration(&c.DBProbeTimeout, "GATEWAY_DB_PROBE_TIMEOUT", "3s",
			"a database host that does not answer the once-a-second probe within this is silent: its connections are cut", positive),
		duration(&c.DBTCPUserTimeout, "GATEWAY_DB_TCP_USER_TIMEOUT", "5s",
			"TCP_USER_TIMEOUT of database connections: data unacknowledged this long closes the connection", positive),
		duration(&c.ShutdownDrain, "GATEWAY_SHUTDOWN_DRAIN", "5s",
			"on SIGTERM, how long /readyz answers 503 while requests are still served, before the listeners close", nonNegative),

		duration(&c.FXRateMaxAge, "GATEWAY_FX_RATE_MAX_AGE", "24h", "FX rates older than this are refused", positive),
		duration(&c.HoldExpiry, "GATEWAY_HOLD_EXPIRY", "168h", "authorization holds not cleared within this are released", positive),
		currencyAmounts(&c.NetworkBounds.MessageMax, "GATEWAY_NETWORK_MESSAGE_MAX",
			"largest card-network message per currency, CUR:amount,… (default USD:1000000.00, other currencies converted)"),
		percentBps(&c.NetworkBounds.OverCaptureBps, "GATEWAY_NETWORK_OVER_CAPTURE_PCT", "20",
			"how far a clearing may exceed its authorization, in percent, 0 to 100 with up to 2 decimals"),
		currencyAmounts(&c.NetworkBounds.UnmatchedRefundMax, "GATEWAY_NETWORK_UNMATCHED_REFUND_MAX",
			"refunds a card may receive beyond what the network captured on it, CUR:amount,… (default none)"),

		duration(&c.RemitScreeningDelay, "GATEWAY_REMIT_SCREENING_DELAY", "2s", "time in SCREENING of the simulated rail", positive),
		duration(&c.RemitInFlight, "GATEWAY_REMIT_IN_FLIGHT", "10s", "time IN_FLIGHT of the simulated rail", positive),
		text(nil, "GATEWAY_RAIL_MODE", "simulated", "simulated decides outcomes; manual waits for rail reports",
			func(v string) error {
				if v != "simulated" && v != "manual" {
					return fmt.Errorf("%q is not simulated or manual", v)
				}
				c.RailManual = v == "manual"
				return nil
			}),
		// By default an account number that ends in 0000 comes back as AC01
		// (incorrect account number): a way to see RETURNED without a partner.
		text(nil, "GATEWAY_RAIL_RETURN_PATTERN", `0000$`, "beneficiary account numbers (a regular expression) the simulated rail returns",
			func(v string) (err error) {
				if c.RailReturnPattern, err = regexp.Compile(v); err != nil {
					return fmt.Errorf("%q is not a regular expression: %v", v, err)
				}
				return nil
			}),
		text(&c.RailReturnReason, "GATEWAY_RAIL_RETURN_REASON", "AC01", "the ISO 20022 reason the simulated rail returns with",
			func(v string) error {
				if !rules.IsReturnReasonCode(v) {
					return fmt.Errorf("%q is not an ISO 20022 return reason code such as AC01", v)
				}
				return nil
			}),
		boolean(&c.RequireSanctionsList, "GATEWAY_REQUIRE_SANCTIONS_LIST", "refuse to pass screening while no sanctions list is loaded"),

		text(&c.CheckpointKeyFile, "GATEWAY_CHECKPOINT_KEY_FILE", "",
			"the Ed25519 key file that signs checkpoints of the journal heads (gateway audit checkpoint-key); unset: no checkpoint worker",
			checkKeyFile),
		duration(&c.CheckpointEvery, "GATEWAY_CHECKPOINT_EVERY", "1h", "how often the checkpoint worker signs and stores a checkpoint", time.Minute),

		text(&c.GOGC, "GOGC", "", "Go's collector target; unset: 400 for serve", checkGOGC).noFlag(),
		text(&c.GOMEMLIMIT, "GOMEMLIMIT", "", "Go's soft memory limit; unset: 150MiB for serve", checkGOMEMLIMIT).noFlag(),
	}
}

// check is what no one setting can see: settings that go together.
func (c *Config) check() error {
	if (c.TLSCert == "") != (c.TLSKey == "") {
		name := "GATEWAY_TLS_KEY"
		if c.TLSCert == "" {
			name = "GATEWAY_TLS_CERT"
		}
		return c.errorOf(name, "set both GATEWAY_TLS_CERT and GATEWAY_TLS_KEY, or neither")
	}
	if err := c.checkConsole(); err != nil {
		return err
	}
	if err := c.checkCells(); err != nil {
		return err
	}
	if c.NetworkBounds.OverCaptureBps == 0 {
		c.NetworkBounds.OverCaptureBps = network.NoOverCapture // 0 % is a choice, not "the default"
	}
	limits, err := c.Limits.Check()
	if err != nil {
		return c.fieldError(err)
	}
	c.Limits = limits
	return nil
}

// checkConsole refuses console settings that contradict each other: an
// idle expiry past the absolute one would never apply.
func (c *Config) checkConsole() error {
	switch {
	case c.ConsoleSessionMax > consoleSessionMaxMax:
		return c.errorOf("GATEWAY_CONSOLE_SESSION_MAX", fmt.Sprintf("%v is longer than %v", c.ConsoleSessionMax, consoleSessionMaxMax))
	case c.ConsoleIdleTimeout > c.ConsoleSessionMax:
		// Name the one the operator set: the idle expiry unless only the
		// absolute one was.
		if c.Source("GATEWAY_CONSOLE_IDLE_TIMEOUT") == SourceDefault {
			return c.errorOf("GATEWAY_CONSOLE_SESSION_MAX", fmt.Sprintf("%v is shorter than the idle expiry GATEWAY_CONSOLE_IDLE_TIMEOUT (%v)",
				c.ConsoleSessionMax, c.ConsoleIdleTimeout))
		}
		return c.errorOf("GATEWAY_CONSOLE_IDLE_TIMEOUT", fmt.Sprintf("%v is longer than the absolute expiry GATEWAY_CONSOLE_SESSION_MAX (%v)",
			c.ConsoleIdleTimeout, c.ConsoleSessionMax))
	case c.ConsoleLockoutFor > consoleLockoutForMax:
		return c.errorOf("GATEWAY_CONSOLE_LOCKOUT_DURATION", fmt.Sprintf("%v is longer than %v", c.ConsoleLockoutFor, consoleLockoutForMax))
	}
	return nil
}

// checkKeyFile refuses a key file that is not there, at start rather than
// at the first checkpoint (its content and mode are checked when it is
// loaded: internal/audit.LoadSigner).
func checkKeyFile(v string) error {
	if v == "" {
		return nil
	}
	st, err := os.Stat(v)
	if err != nil {
		return fmt.Errorf("%q cannot be read: %v", v, errors.Unwrap(err))
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%q is not a file", v)
	}
	return nil
}
