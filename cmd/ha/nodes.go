package main

import (
	"flag"
	"fmt"
)

// formationPorts are the ports of a formation of nodes data nodes (2 or
// 3): -ports as given, or its default with node3's port after node2's
// when -nodes 3 leaves -ports unset (25433 for the default 25430-25432).
// A count of ports that does not match -nodes is refused rather than
// guessed.
func formationPorts(portsFlag string, portsSet bool, nodes int) ([]int, error) {
	if nodes != 2 && nodes != 3 {
		return nil, fmt.Errorf("-nodes: %d: a formation has 2 or 3 data nodes", nodes)
	}
	ports, err := parsePorts(portsFlag)
	if err != nil {
		return nil, fmt.Errorf("-ports: %w", err)
	}
	if !portsSet && nodes == 3 && len(ports) == 3 {
		ports = append(ports, ports[2]+1)
	}
	if len(ports) != 1+nodes {
		return nil, fmt.Errorf("-ports: %d ports for %d data nodes: the monitor's and one per node", len(ports), nodes)
	}
	return ports, nil
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
