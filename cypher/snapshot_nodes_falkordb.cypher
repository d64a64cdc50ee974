// snapshot_nodes on FalkorDB, whose node ids are id(n).
MATCH (n) RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props
