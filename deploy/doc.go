// Package deploy holds the files that run the gateway outside `make`: the
// systemd units (systemd/), the container image (container/), the
// three-machine pg_auto_failover layout (three-nodes/), the alert rules
// and the dashboard (prometheus/, grafana/). It has no code: its tests
// check those files — systemd-analyze verify, the image built by buildah,
// the layout's invariants — so that they cannot drift from the gateway
// (docs/operations.md, "Deploying"; docs/ha.md, "On three machines").
package deploy
