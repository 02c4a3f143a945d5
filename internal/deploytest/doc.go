// Package deploytest checks the files of deploy/ that run the gateway
// outside `make`: the systemd units (deploy/systemd), the container image
// (deploy/container), the three-machine pg_auto_failover layout
// (deploy/three-nodes). It has no code: its tests check those files —
// systemd-analyze verify, the image built by buildah, the layout's
// invariants — so that they cannot drift from the gateway
// (docs/operations.md, "Deploying"; docs/ha.md, "On three machines").
package deploytest
