package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/internal/cards"
	"github.com/paygate/gateway/internal/database"
	"github.com/paygate/gateway/internal/domains"
	"github.com/paygate/gateway/internal/fx"
	merchants "github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/internal/network"
	"github.com/paygate/gateway/internal/remittance"
	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/ledger/pgcluster"
	"github.com/paygate/gateway/tools/internal/harness"
)

// env is what every scenario shares: the gateway binary, the durable
// PostgreSQL cluster (which the outage scenario kills and restarts), the
// data key and the internal API token. Processes run through
// tools/internal/harness, as the bench's do.
type env struct {
	tmp      string
	bin      string
	pgOpts   pgcluster.Options
	pg       *harness.Postgres
	dataKey  []byte
	token    string
	verbose  bool
	out      io.Writer
	sealer   *merchants.Sealer
	logFiles []string
}

func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(e.out, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
}

func (e *env) debugf(format string, args ...any) {
	if e.verbose {
		e.logf(format, args...)
	}
}

// build compiles the gateway into the temporary directory.
func (e *env) build(ctx context.Context) error {
	e.bin = filepath.Join(e.tmp, "gateway")
	return harness.Build(ctx, e.bin, e.out)
}

// startPG starts the durable cluster; restartPG starts it again on the
// same directory after killPG.
func (e *env) startPG(ctx context.Context) (err error) {
	e.pg, err = harness.StartPostgres(ctx, e.pgOpts)
	return err
}

func (e *env) restartPG(ctx context.Context) error { return e.pg.Start(ctx) }

// killPG stops PostgreSQL in immediate mode: no checkpoint, crash recovery
// at the next start.
func (e *env) killPG() { e.pg.Kill() }

func (e *env) stopPG() {
	if e.pg != nil {
		_ = e.pg.Stop()
	}
}

// newDatabase creates a database for one scenario and returns its URL.
func (e *env) newDatabase(ctx context.Context, name string) (string, error) {
	return e.pg.NewDatabase(ctx, name)
}

// services is a ledger of this process with the domains on it.
type services struct {
	*ledger.Ledger
	merchants *merchants.Service
	cards     *cards.Service
	network   *network.Service
	remit     *remittance.Service
}

// openLedger opens the scenario's database with a ledger of its own (setup
// and checks run in this process, beside the gateways); holds expire after
// holdExpiry (0: the default).
func (e *env) openLedger(ctx context.Context, url string, conns int, cfg ledger.Config, holdExpiry time.Duration) (*bun.DB, *services, error) {
	db, err := database.OpenDB(ctx, url, database.DBOptions{ConnsMax: conns})
	if err != nil {
		return nil, nil, err
	}
	if err := database.Migrate(ctx, db); err != nil {
		db.Close()
		return nil, nil, err
	}
	cfg.Domains = domains.All()
	l := ledger.New(db, cfg)
	ms := merchants.New(l, e.sealer)
	rates := fx.New(l, 0)
	c := cards.New(l, rates, ms)
	return db, &services{Ledger: l, merchants: ms, cards: c, remit: remittance.New(l),
		network: network.New(l, c, rates, network.Config{HoldExpiry: holdExpiry})}, nil
}

// newGateway is a `gateway serve` on the scenario's database, over HTTPS
// with its self-signed certificate (the Go client refuses plain http://
// base URLs since it became a module of its own: every chaos operation
// was refused before it was sent), logging warnings only; extra settings
// win.
func (e *env) newGateway(name, dbURL string, extra ...string) (*harness.Gateway, error) {
	g, err := harness.NewGateway(harness.GatewayConfig{
		Bin: e.bin, Name: name, DatabaseURL: dbURL,
		DataDir:       filepath.Join(e.tmp, "data-"+name),
		LogPath:       filepath.Join(e.tmp, "logs", name+".log"),
		DataKey:       hex.EncodeToString(e.dataKey),
		InternalToken: e.token,
		IdleConnsMax:  64,
		Env:           append([]string{"GATEWAY_LOG_LEVEL=warn"}, extra...),
	})
	if err != nil {
		return nil, err
	}
	e.logFiles = append(e.logFiles, g.LogPath())
	return g, nil
}

// auditVerify runs `gateway audit verify` on the scenario's database.
func (e *env) auditVerify(ctx context.Context, dbURL string) (bool, string) {
	cmd := exec.CommandContext(ctx, e.bin, "audit", "verify")
	cmd.Env = append(harness.MinimalEnv(), "DATABASE_URL="+dbURL, "DATABASE_ALLOW_SUPERUSER=1",
		"GATEWAY_DATA_KEY="+hex.EncodeToString(e.dataKey), "GATEWAY_DATA_DIR="+filepath.Join(e.tmp, "data-audit"),
		"GATEWAY_LOG_LEVEL=warn")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := strings.TrimSpace(out.String())
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return false, fmt.Sprintf("exit status %d: %s", ee.ExitCode(), lastLines(text, 20))
		}
		return false, err.Error()
	}
	return true, lastLines(text, 3)
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// tailFile is the end of a gateway's log.
func tailFile(path string, n int) string { return harness.TailFile(path, n) }
