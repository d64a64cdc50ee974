// Every edge, for a whole-graph snapshot (fieldgraph.graph.snapshot), its ends by the store's node ids.
// (FalkorDB has no elementId: snapshot_edges_falkordb.cypher)
MATCH (a)-[e]->(b) RETURN elementId(a) AS a, type(e) AS type, elementId(b) AS b, properties(e) AS props
