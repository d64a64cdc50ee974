// Whether the graph holds any node (the bulk load refuses a graph that does): 0 or 1.
MATCH (n) WITH n LIMIT 1 RETURN count(n) AS nodes
