# The gateway's tasks. `make run` and `make test` are all a fresh Debian
# machine with Go needs: `pg` installs the PostgreSQL server binaries when
# they are missing. README.md explains each target.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GO ?= go
# Where `make run` keeps its data: the embedded PostgreSQL cluster (pg/), the
# data key (data.key) and the self-signed TLS certificate (tls/).
GATEWAY_DATA_DIR ?= ./var
# Extra arguments: make run ARGS=--plain-http, make bench BENCH_ARGS='-duration 5s'.
ARGS ?=
BENCH_ARGS ?=
TEST_FLAGS ?= -race -count=1 -timeout 30m
GOLANGCI_LINT_VERSION ?= v2.15.0
# The OpenAPI linter, from the npm registry, installed into bin/redocly on
# first use (node and npm must be on the machine).
REDOCLY_VERSION ?= 2.77.0
REDOCLY := bin/redocly/node_modules/.bin/redocly
# Where Debian puts the server binaries (/usr/lib/postgresql/<version>/bin).
PG_LIB ?= /usr/lib/postgresql

# sudo only when we are not root and it exists.
SUDO := $(shell [ "$$(id -u)" = 0 ] || ! command -v sudo >/dev/null 2>&1 || echo sudo)

.PHONY: build image pg pg-ha chromium stdwebhooks run run-ha backup-ha restore-ha test test-short test-ha bench chaos chaos-ha chaos-cells lint lint-openapi fmt vet clean clean-data

# COMMIT is stamped into bin/gateway for `gateway version` where the go
# command does not record vcs.revision itself (git worktrees, -buildvcs=false).
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)

build:
	$(GO) build -ldflags "-X main.buildCommit=$(COMMIT)" -o bin/gateway ./cmd/gateway
	$(GO) build -o bin/bench ./tools/bench
	$(GO) build -o bin/ha ./cmd/ha

# image builds the container image of deploy/container/Containerfile: the
# static binary on scratch, as uid 65532 (docs/operations.md, "Deploying"),
# with Debian's buildah (installed when missing; no daemon, no registry).
IMAGE ?= gateway:$(shell git rev-parse --short HEAD 2>/dev/null || echo dev)
image:
	@command -v buildah >/dev/null 2>&1 || { echo "make image: installing Debian's buildah"; \
		$(SUDO) apt-get update -qq; $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends buildah >/dev/null; }
	rm -rf bin/image
	COMMIT="$(COMMIT)" deploy/container/context bin/image
	$(SUDO) buildah bud --isolation chroot -f deploy/container/Containerfile -t "$(IMAGE)" bin/image

# pg makes sure the PostgreSQL server binaries (initdb, postgres) and the OS
# user "postgres" exist: as root the cluster runs as that user, because
# PostgreSQL refuses to run as root. Quiet when everything is there.
pg:
	@if ! command -v initdb >/dev/null 2>&1 && ! ls $(PG_LIB)/*/bin/initdb >/dev/null 2>&1; then \
		echo "make pg: the PostgreSQL server binaries (initdb) are not installed; installing Debian's postgresql package"; \
		$(SUDO) apt-get update -qq; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null; \
		ls $(PG_LIB)/*/bin/initdb >/dev/null 2>&1 || { echo "make pg: initdb is still missing after the install" >&2; exit 1; }; \
	fi
	@if ! id -u postgres >/dev/null 2>&1; then \
		echo "make pg: creating the OS user postgres, which runs PostgreSQL when the gateway runs as root"; \
		$(SUDO) useradd --system --user-group --home-dir /var/lib/postgresql --no-create-home \
			--shell /usr/sbin/nologin postgres; \
	fi

# pg-ha adds what high availability needs beside the server binaries:
# pg_auto_failover (Debian's postgresql-<version>-auto-failover, the
# extension, and pg-auto-failover-cli, pg_autoctl) and pgBackRest, for the
# newest PostgreSQL installed (docs/ha.md). Quiet when they are there.
pg-ha: pg
	@v=$$(ls -d $(PG_LIB)/*/bin/initdb 2>/dev/null | sed 's,.*/postgresql/\([0-9]*\)/bin/initdb,\1,' | sort -n | tail -1); \
	missing=""; \
	command -v pg_autoctl >/dev/null 2>&1 || missing="$$missing pg-auto-failover-cli"; \
	[ -n "$$v" ] && ls $(PG_LIB)/$$v/lib/pgautofailover.so >/dev/null 2>&1 || missing="$$missing postgresql-$$v-auto-failover"; \
	command -v pgbackrest >/dev/null 2>&1 || missing="$$missing pgbackrest"; \
	if [ -n "$$missing" ]; then \
		echo "make pg-ha: installing Debian's$$missing"; \
		$(SUDO) apt-get update -qq; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
		command -v pg_autoctl >/dev/null && command -v pgbackrest >/dev/null || { echo "make pg-ha: pg_autoctl or pgbackrest is still missing after the install" >&2; exit 1; }; \
	fi

# chromium installs Debian's chromium when it is missing: the web console's
# browser tests drive it headless (internal/console, docs/console.md).
# Quiet when it is there.
chromium:
	@if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/lib/chromium/chromium ]; then \
		echo "make chromium: installing Debian's chromium for the console's browser tests"; \
		$(SUDO) apt-get update -qq; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
		command -v chromium >/dev/null 2>&1 || { echo "make chromium: chromium is still missing after the install" >&2; exit 1; }; \
	fi

# stdwebhooks installs the pinned npm Standard Webhooks libraries
# (standardwebhooks, svix) that verify real deliveries in internal/delivery
# (docs/callbacks.md, "Standard Webhooks"), from the committed lock file.
# Quiet when they are there.
STDWEBHOOKS_DIR = internal/delivery/testdata/stdwebhooks
stdwebhooks:
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "make stdwebhooks: installing Debian's nodejs and npm for the Standard Webhooks verification test"; \
		$(SUDO) apt-get update -qq; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null; \
	fi
	@[ -d $(STDWEBHOOKS_DIR)/node_modules ] || (cd $(STDWEBHOOKS_DIR) && npm ci --no-audit --no-fund --ignore-scripts)

# run starts the gateway on its embedded PostgreSQL in $(GATEWAY_DATA_DIR)/pg.
# Ctrl-C stops both; the next `make run` finds the data again.
run: pg build
	GATEWAY_DATA_DIR="$(GATEWAY_DATA_DIR)" ./bin/gateway serve --demo $(ARGS)

# run-ha starts a pg_auto_failover formation on this machine — a monitor and
# three PostgreSQL nodes on 127.0.0.1, ports $(HA_PORTS) (monitor, node1,
# node2; node3 on the port after node2's), data in $(GATEWAY_DATA_DIR)/ha,
# WAL archived by pgBackRest — and the gateway on its multi-host URL; it
# prints what it started. Ctrl-C stops everything; the next run-ha finds the
# same formation (docs/ha.md). Three data nodes with number_sync_standbys 1:
# losing one node keeps two copies of every acknowledged write. HA_NODES=2
# makes the older two-node layout; the number is fixed when the formation is
# made.
HA_PORTS ?= 25430,25431,25432
HA_NODES ?= 3
run-ha: pg-ha build
	GATEWAY_DATA_DIR="$(GATEWAY_DATA_DIR)/ha/gateway" ./bin/ha run -dir "$(GATEWAY_DATA_DIR)/ha" -nodes "$(HA_NODES)" -ports "$(HA_PORTS)" -- --demo $(ARGS)

# backup-ha takes a pgBackRest backup of the run-ha formation's primary
# (BACKUP_TYPE=full|diff|incr) and lists the backups; restore-ha restores
# them to TARGET ('2026-11-25 10:00:00+00') into a new data directory and
# runs audit verify on it (docs/operations.md, "Backups"), with the data
# key DATA_KEY (the copy kept beside the backups; default the formation's
# gateway's own key): a restore without the database's key is refused.
BACKUP_TYPE ?= full
TARGET ?=
DATA_KEY ?= $(GATEWAY_DATA_DIR)/ha/gateway/data.key
backup-ha: pg-ha build
	./bin/ha backup -dir "$(GATEWAY_DATA_DIR)/ha" -type "$(BACKUP_TYPE)"
restore-ha: pg-ha build
	@[ -n "$(TARGET)" ] || { echo "make restore-ha: set TARGET, e.g. TARGET='2026-11-25 10:00:00+00'" >&2; exit 2; }
	./bin/ha restore -dir "$(GATEWAY_DATA_DIR)/ha" -target "$(TARGET)" -key "$(DATA_KEY)"

# test runs every test with the race detector. Without DATABASE_URL, one
# throwaway PostgreSQL serves every package (`gateway devdb`) and is removed
# afterwards, even when a test binary dies; each test still gets its own
# database (ledger/pgtest).
# pg-ha first: the backup-and-restore test needs pgbackrest, and fails
# rather than skipping when GATEWAY_TEST_REQUIRE_HA_TOOLS is set; chromium
# likewise for the console's browser tests (GATEWAY_TEST_REQUIRE_BROWSER).
# GATEWAY_UPDATE_SCREENSHOTS=1 make test rewrites docs/console/*.png.
# stdwebhooks likewise for the npm libraries (GATEWAY_TEST_REQUIRE_NODE).
test: pg pg-ha chromium stdwebhooks
	@export GATEWAY_TEST_REQUIRE_HA_TOOLS=1 GATEWAY_TEST_REQUIRE_BROWSER=1 GATEWAY_TEST_REQUIRE_NODE=1; \
	if [ -n "$${DATABASE_URL:-}" ]; then \
		echo "make test: using DATABASE_URL"; \
		$(GO) test $(TEST_FLAGS) ./...; \
	else \
		$(GO) build -o bin/gateway ./cmd/gateway; \
		./bin/gateway devdb -- $(GO) test $(TEST_FLAGS) ./...; \
	fi

# test-short is the fast tier (docs/architecture.md, "Test tiers"): every
# test that needs neither PostgreSQL nor a browser — the pure rules, the
# handlers against fakes, the decoders' fuzz seeds, the architecture —
# with the race detector, in about a minute on two cores. -short is the
# switch: ledger/pgtest, internal/pgha/pghatest and the console's browser
# helper skip under it, so nothing starts a server, and a new database test
# is out of the tier without a list to keep. The REQUIRE variables of
# make test would turn those skips into failures: they are unset here, and
# so is DATABASE_URL, which the tier never needs. -ldflags='-w -s' links
# the ~50 race-instrumented test binaries without DWARF or a symbol table:
# linking is most of the tier's CPU with a warm cache, and this takes about
# a third of it off; stack traces and race reports read the Go tables, not
# DWARF, so they are unchanged. make test keeps full binaries for debuggers.
test-short:
	env -u DATABASE_URL -u GATEWAY_TEST_REQUIRE_HA_TOOLS -u GATEWAY_TEST_REQUIRE_BROWSER -u GATEWAY_TEST_REQUIRE_NODE \
		$(GO) test -race -short -count=1 -timeout 5m -ldflags='-w -s' ./...

# test-ha runs the high-availability tests, including the pg_auto_failover
# formation's (a minute or two of most of the machine, so not in make test).
test-ha: pg-ha
	GATEWAY_TEST_FORMATION=1 GATEWAY_TEST_REQUIRE_HA_TOOLS=1 $(GO) test $(TEST_FLAGS) ./internal/pgha/... ./cmd/ha
	$(GO) test $(TEST_FLAGS) -run 'TestServeFollowsAPromotion|TestServeLeavesADemotedPrimary' ./cmd/gateway

# bench starts its own durable PostgreSQL (fsync on) and the real gateway
# (built from ./cmd/gateway), drives every scenario over HTTPS beside the
# plain-SQL ceiling measured in the same run, prints one table and writes it
# to bench-results/latest.json. About 6 minutes on 2 cores; docs/performance.md
# explains the rows; `go run ./tools/bench -help` lists the flags.
bench: pg
	$(GO) run ./tools/bench $(BENCH_ARGS)

# chaos builds the gateway, starts its own durable PostgreSQL and injects
# faults into real `gateway serve` processes: kill -9 under load, a database
# outage, several instances on one database (docs/reliability.md), then on a
# pg_auto_failover formation on $(HA_PORTS): the primary lost, the standby
# lost, a restore from backup (docs/ha.md). Several minutes; exit status 1
# on any violation. make chaos CHAOS_ARGS='-seeds 42'. chaos-ha runs the
# HA scenarios alone; chaos-cells the cells scenarios alone (two formations on
# free ports: one cell's primary lost under load on both; a merchant moved
# under load, and the mover killed mid-move: docs/ha.md).
CHAOS_ARGS ?=
chaos: pg pg-ha
	$(GO) run ./tools/chaos -ha-ports "$(HA_PORTS)" $(CHAOS_ARGS)

chaos-ha: pg pg-ha
	$(GO) run ./tools/chaos -only primary,frozen,standby,restore,standby3,primary3 -ha-ports "$(HA_PORTS)" $(CHAOS_ARGS)

chaos-cells: pg pg-ha
	$(GO) run ./tools/chaos -only cells,move,movekill $(CHAOS_ARGS)

lint: vet lint-openapi
	@lint=$$(command -v golangci-lint || echo "$(CURDIR)/bin/golangci-lint"); \
	if [ ! -x "$$lint" ]; then \
		echo "make lint: installing golangci-lint $(GOLANGCI_LINT_VERSION) into bin/"; \
		GOBIN="$(CURDIR)/bin" $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION); \
	fi; \
	"$$lint" run ./...; \
	cd api/client && "$$lint" run ./...

# lint-openapi lints both OpenAPI documents with Redocly's recommended rules:
# any warning fails (redocly exits 0 on warnings, so its report is read).
# Accepted warnings are listed, one by one with the reason, in
# .redocly.lint-ignore.yaml.
lint-openapi:
	@if [ ! -x "$(REDOCLY)" ] || ! "$(REDOCLY)" --version 2>/dev/null | grep -qx "$(REDOCLY_VERSION)"; then \
		echo "make lint: installing @redocly/cli $(REDOCLY_VERSION) into bin/redocly"; \
		npm install --prefix bin/redocly --no-audit --no-fund --loglevel=error "@redocly/cli@$(REDOCLY_VERSION)" >/dev/null; \
	fi
	@out=$$(REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true "$(REDOCLY)" lint --format=stylish \
		docs/openapi.yaml docs/openapi-internal.yaml 2>&1) || { echo "$$out" >&2; exit 1; }; \
	if echo "$$out" | grep -Eq '^[[:space:]]*[0-9]+:[0-9]+[[:space:]]+(warning|error)|You have [0-9]+ (warning|error)'; then \
		echo "$$out" >&2; echo "make lint: the OpenAPI documents have warnings" >&2; exit 1; \
	fi; \
	echo "make lint: docs/openapi.yaml and docs/openapi-internal.yaml lint clean (@redocly/cli $(REDOCLY_VERSION))"

fmt:
	gofmt -s -w $$(find . \( -path ./var -o -path ./bin -o -path ./.git \) -prune -o -name '*.go' -print)

# The Go client is a module of its own (api/client/go.mod): vet and lint
# it too; make test runs its tests (internal/contracttest).
vet:
	$(GO) vet ./...
	cd api/client && $(GO) vet ./...

clean:
	rm -rf bin/

# clean-data deletes the gateway's data: the embedded database, the data key
# and the certificate. It refuses while the embedded PostgreSQL runs.
clean-data:
	@pg="$(GATEWAY_DATA_DIR)/pg"; real="$$pg"; \
	if [ -L "$$pg/cluster" ]; then real=$$(readlink "$$pg/cluster"); fi; \
	if [ -f "$$real/data/postmaster.pid" ] && kill -0 "$$(head -1 "$$real/data/postmaster.pid")" 2>/dev/null; then \
		echo "make clean-data: PostgreSQL is running on $$real; stop the gateway first" >&2; exit 1; \
	fi; \
	if [ "$$real" != "$$pg" ]; then rm -rf "$$real"; fi; \
	rm -rf "$(GATEWAY_DATA_DIR)"
