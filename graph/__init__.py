"""fieldgraph.graph."""
