// Every node, for a whole-graph snapshot (fieldgraph.graph.snapshot): the store's id ties edges to it.
// (FalkorDB has no elementId: snapshot_nodes_falkordb.cypher)
MATCH (n) RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props
