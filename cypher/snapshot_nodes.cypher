// Every node, for a whole-graph snapshot (fieldgraph.graph.snapshot): the store's id ties edges to it.
MATCH (n) RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props
