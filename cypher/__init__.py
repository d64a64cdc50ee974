"""fieldgraph.cypher."""
