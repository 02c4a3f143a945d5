package main

import "fmt"

// formationPorts are the ports of a formation of nodes data nodes (2 or
// 3): -ports as given; with -nodes 3 and three ports, node3's is the one
// after node2's (25433 for the default 25430-25432), so that `make run-ha
// HA_NODES=3` needs no other change. Four ports for two nodes are
// refused rather than guessed.
func formationPorts(portsFlag string, nodes int) ([]int, error) {
	if nodes != 2 && nodes != 3 {
		return nil, fmt.Errorf("-nodes: %d: a formation has 2 or 3 data nodes", nodes)
	}
	ports, err := parsePorts(portsFlag)
	if err != nil {
		return nil, fmt.Errorf("-ports: %w", err)
	}
	if nodes == 3 && len(ports) == 3 {
		ports = append(ports, ports[2]+1)
	}
	if len(ports) != 1+nodes {
		return nil, fmt.Errorf("-ports: %d ports for %d data nodes: the monitor's and one per node", len(ports), nodes)
	}
	return ports, nil
}
