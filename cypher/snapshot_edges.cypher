// Every edge, for a whole-graph snapshot (fieldgraph.graph.snapshot), its ends by the store's node ids.
MATCH (a)-[e]->(b) RETURN id(a) AS a, type(e) AS type, id(b) AS b, properties(e) AS props
