// snapshot_edges on FalkorDB, whose node ids are id(n).
MATCH (a)-[e]->(b) RETURN id(a) AS a, type(e) AS type, id(b) AS b, properties(e) AS props
